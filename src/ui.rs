//! Terminal output for the client commands: tables, JSON, confirmations.
//! Never imported by `node/`.

use std::io::IsTerminal;

use anyhow::anyhow;
use serde::Serialize;

use crate::cmd::Failure;

/// Prints a value as pretty JSON on stdout (`--json`).
pub fn print_json(value: &impl Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Failure::Refused(e.into()))?;
    println!("{text}");
    Ok(())
}

/// Left-aligned columns, two spaces apart, with a header row.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = vec![line(headers.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.iter().map(|row| line(row.clone())));
    out.join("\n")
}

/// Asks before a destructive step: `--yes` skips the question; without a
/// terminal and without `--yes` the command refuses.
pub fn confirm(prompt: &str, yes: bool) -> Result<(), Failure> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(Failure::Usage(anyhow!(
            "refusing to {prompt} without confirmation: no terminal to ask on; pass --yes"
        )));
    }
    let confirmed = dialoguer::Confirm::new()
        .with_prompt(format!("{prompt}?"))
        .default(false)
        .interact()
        .map_err(|e| Failure::Usage(anyhow!("no confirmation: {e}")))?;
    if confirmed {
        Ok(())
    } else {
        Err(Failure::Refused(anyhow!("cancelled")))
    }
}

/// A progress line on stderr, unless quiet.
pub fn say(quiet: bool, text: impl std::fmt::Display) {
    if !quiet {
        eprintln!("{text}");
    }
}
