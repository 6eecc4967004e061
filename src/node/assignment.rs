//! Which nodes run which applications (DESIGN §9): rendezvous hashing over
//! the alive nodes whose labels match the application's selector, `replicas`
//! of them or all. Stable: adding or losing one node moves only the
//! applications that must move. The coordinator writes the result to
//! `registry/coordinator/assignment.json` (with its epoch) and to each
//! application's `placement`; until it has, a node places a new application
//! provisionally with the same function, so a first deploy need not wait.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::registry::{ApplicationRecord, NodeRecord, Placement, Replicas};

/// Does this node's label set satisfy the selector?
pub fn matches(node: &NodeRecord, selector: Option<&BTreeMap<String, String>>) -> bool {
    selector.is_none_or(|wanted| wanted.iter().all(|(k, v)| node.labels.get(k) == Some(v)))
}

/// The rendezvous score of a node for an application.
fn score(app: &str, node: &str) -> u64 {
    let digest = Sha256::new()
        .chain_update(app.as_bytes())
        .chain_update([0])
        .chain_update(node.as_bytes())
        .finalize();
    u64::from_be_bytes([
        digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
    ])
}

/// Places one application on `alive` nodes.
pub fn place(app: &ApplicationRecord, alive: &[NodeRecord]) -> Placement {
    let none = |reason: String| Placement {
        nodes: Vec::new(),
        reason: Some(reason),
    };
    if app.blocked {
        return none("blocked".into());
    }
    if app.retired.is_some() {
        return none("retired".into());
    }
    // Only nodes with a runtime can run anything.
    let runtimes: Vec<&NodeRecord> = alive.iter().filter(|n| n.celld.is_some()).collect();
    let mut eligible: Vec<&NodeRecord> = runtimes
        .iter()
        .copied()
        .filter(|n| matches(n, app.selector.as_ref()))
        .collect();
    if eligible.is_empty() {
        return none(match &app.selector {
            _ if alive.is_empty() => "no node of the fleet is alive".into(),
            _ if runtimes.is_empty() => "no alive node has a Celld runtime".into(),
            Some(selector) => format!(
                "no alive node has the labels {}",
                selector
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => "no node of the fleet is alive".into(),
        });
    }
    eligible.sort_by_key(|n| std::cmp::Reverse(score(app.name.as_str(), n.id.as_str())));
    let (take, reason) = match app.replicas {
        Replicas::All => (eligible.len(), None),
        Replicas::Count(n) if (n as usize) > eligible.len() => (
            eligible.len(),
            Some(format!(
                "{n} replicas wanted, {} eligible node{}",
                eligible.len(),
                if eligible.len() == 1 { "" } else { "s" }
            )),
        ),
        Replicas::Count(n) => (n as usize, None),
    };
    let mut nodes: Vec<String> = eligible
        .iter()
        .take(take)
        .map(|n| n.id.to_string())
        .collect();
    nodes.sort();
    Placement { nodes, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{AppName, NodeId};

    fn node(id: &str, labels: &[(&str, &str)]) -> NodeRecord {
        NodeRecord {
            v: crate::registry::V1,
            id: NodeId::parse(id).unwrap_or_else(|r| panic!("{r}")),
            public_key: crate::auth::PublicJwk {
                kty: "OKP".into(),
                crv: "Ed25519".into(),
                x: String::new(),
            },
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            advertise: String::new(),
            version: String::new(),
            celld: Some(crate::registry::CelldInfo {
                engine: "workerd".into(),
                version: "test".into(),
            }),
            started_at: crate::wire::Timestamp::now(),
            heartbeat_at: crate::wire::Timestamp::now(),
            serving: Default::default(),
            failures: Default::default(),
        }
    }

    fn app(name: &str, replicas: Replicas, selector: Option<&[(&str, &str)]>) -> ApplicationRecord {
        let mut app =
            ApplicationRecord::new(AppName::parse(name).unwrap_or_else(|r| panic!("{r}")));
        app.replicas = replicas;
        app.selector = selector.map(|s| {
            s.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        });
        app
    }

    #[test]
    fn replicas_selectors_and_reasons() {
        let nodes = [
            node("a", &[("region", "eu")]),
            node("b", &[("region", "eu")]),
            node("c", &[("region", "us")]),
        ];
        assert_eq!(
            place(&app("shop", Replicas::All, None), &nodes).nodes,
            ["a", "b", "c"]
        );
        assert_eq!(
            place(&app("shop", Replicas::Count(2), None), &nodes)
                .nodes
                .len(),
            2
        );
        assert_eq!(
            place(
                &app("shop", Replicas::All, Some(&[("region", "eu")])),
                &nodes
            )
            .nodes,
            ["a", "b"]
        );
        let lacking = place(
            &app("shop", Replicas::Count(3), Some(&[("region", "eu")])),
            &nodes,
        );
        assert_eq!(
            (lacking.nodes.len(), lacking.reason.as_deref()),
            (2, Some("3 replicas wanted, 2 eligible nodes"))
        );
        let nowhere = place(
            &app("shop", Replicas::All, Some(&[("region", "mars")])),
            &nodes,
        );
        assert_eq!(
            (nowhere.nodes.len(), nowhere.reason.as_deref()),
            (0, Some("no alive node has the labels region=mars"))
        );
        let mut blocked = app("shop", Replicas::All, None);
        blocked.blocked = true;
        assert_eq!(place(&blocked, &nodes).reason.as_deref(), Some("blocked"));
    }

    #[test]
    fn losing_a_node_moves_only_what_it_held() {
        let nodes: Vec<NodeRecord> = (0..5).map(|i| node(&format!("n{i}"), &[])).collect();
        let apps: Vec<ApplicationRecord> = (0..200)
            .map(|i| app(&format!("app{i}"), Replicas::Count(2), None))
            .collect();
        let before: Vec<Placement> = apps.iter().map(|a| place(a, &nodes)).collect();
        let after: Vec<Placement> = apps.iter().map(|a| place(a, &nodes[..4])).collect();
        for (b, a) in before.iter().zip(&after) {
            if !b.nodes.contains(&"n4".to_owned()) {
                assert_eq!(a, b, "an application that was not on the lost node moved");
            } else {
                let kept: Vec<_> = b.nodes.iter().filter(|n| *n != "n4").collect();
                assert!(
                    kept.iter().all(|n| a.nodes.contains(n)),
                    "the surviving replica stays"
                );
            }
        }
    }
}
