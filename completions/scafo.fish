# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_scafo_global_optspecs
    string join \n url= key= token= json y/yes v/verbose q/quiet h/help V/version
end

function __fish_scafo_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_scafo_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_scafo_using_subcommand
    set -l cmd (__fish_scafo_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c scafo -n "__fish_scafo_needs_command" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_needs_command" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_needs_command" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_needs_command" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_needs_command" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_needs_command" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_needs_command" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_needs_command" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "sail" -d 'Run a node: the HTTP control API, heartbeats and the registry'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "deploy" -d 'Deploy a project (a directory with a wrangler.jsonc) and follow it until live'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "apps" -d 'Inspect and manage applications'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "ingress" -d 'Helpers that run beside an ingress'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "operators" -d 'Manage operator keys: who may call the fleet\'s API'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "freeze" -d 'Stop deploy intake for the whole fleet (status, lift)'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l config -d 'Config file (TOML) [env: SCAFO_CONFIG] [default: /etc/scafo/scafo.toml when it exists]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l node-id -d 'This node\'s id: a DNS label unique in the fleet [key: node.id]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l listen -d 'API address; port 0 picks a free one [key: api.listen] [default: 127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l advertise -d 'URL other nodes and the ingress use to reach this API [key: node.advertise]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l state-dir -d 'Where the node keeps its key, ingress token and work files [key: state.dir]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l bucket -d 'The registry: s3://bucket[/prefix] or file:///path [key: registry.bucket]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l ingress-token -d 'An admitted ingress token; repeat for several [key: ingress.token]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l label -d 'A node label selectors match, e.g. region=eu-west-1; repeatable [key: node.labels]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l log-format -d 'Log format: text or json [key: log.format]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l api-host -d 'An API host name the routing document publishes for this fleet; repeatable [key: api.hosts]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l platform-domain -d 'A platform domain: applications answer at <name>.<domain>; repeatable [key: platform.domains] [default: localhost]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l bootstrap-admin -d 'Register this public JWK (or key file) as the first admin while the registry holds no operator; its kid is the operator id [key: bootstrap.admin]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand sail" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l name -d 'The application name [default: "name" in the wrangler config]' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l env -d 'Deploy the config\'s env.<ENV> section as the application <name>-<ENV>' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l var -d 'Set a var in the packed copy\'s config (split at the first \':\'; always a string); repeatable' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s m -l message -d 'A note recorded on the deploy' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l selector -d 'Run only on nodes with this label; repeatable' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l replicas -d 'How many nodes run it: a number, or all' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l audience -d 'The audience of the ID token --oidc requests; the nodes\' oidc.audience [default: scafo]' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l no-bundle -d 'Upload the modules as they are ("no_bundle": true in the packed copy)'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l detach -d 'Return once the node accepted the deploy, without following it'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l oidc -d 'Authenticate as this GitHub Actions job: its OIDC ID token (the job needs `permissions: id-token: write`)'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand deploy" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "list" -d 'List the applications this key reaches'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "show" -d 'Show one application\'s record'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "block" -d 'Stop serving an application and refuse its deploys (admin)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "unblock" -d 'Restore a blocked application\'s prior state (admin)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "labels" -d 'Replace an application\'s labels; none clears them (admin)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "retire" -d 'Stop serving an application; it is deleted once the grace period ends'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "unretire" -d 'Undo a retirement during its grace period'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "selector" -d 'Run an application only on nodes with these labels'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "replicas" -d 'How many nodes run an application: a number, or all'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "domains" -d 'Custom domains'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "trust" -d 'Set which CI workloads may deploy it: --issuer/--subject pairs; none clears'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and not __fish_seen_subcommand_from list show block unblock labels retire unretire selector replicas domains trust delete" -f -a "delete" -d 'Delete an application, its claims, deploy records and artifacts'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from block" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unblock" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from labels" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from retire" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from unretire" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -l clear -d 'Remove the selector: any node'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from selector" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from replicas" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -f -a "add" -d 'Claim a host for an application'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from domains" -f -a "remove" -d 'Release a host'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l issuer -d 'An OIDC issuer URL; pairs with the --subject after it' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l subject -d 'A subject, exact or ending in *' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from trust" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -l force -d 'Skip the retirement and grace requirement'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand apps; and __fish_seen_subcommand_from delete" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and not __fish_seen_subcommand_from caddy-permission" -f -a "caddy-permission" -d 'Answer Caddy\'s on-demand TLS permission asks from fleets\' routing documents'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l fleet -d 'A fleet node\'s API URL; repeat for several fleets' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l ingress-token-file -d 'The file holding that fleet\'s ingress token (mode 0600); one per --fleet' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l listen -d 'Where Caddy asks' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l interval-ms -d 'How often each fleet\'s document is fetched, in milliseconds' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_using_subcommand ingress; and __fish_seen_subcommand_from caddy-permission" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "keygen" -d 'Create a key file (0600) and print its public JWK to hand to an admin'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "list" -d 'List operator keys (non-admins see their own rotation lineage)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "add" -d 'Register a key (a fresh grant within your own scope)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "remove" -d 'Remove a key; it is refused from the next request on'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "rotate" -d 'Replace your key with a fresh one: register it, remove the old, swap the file'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and not __fish_seen_subcommand_from keygen list add remove rotate whoami" -f -a "whoami" -d 'Show which operator key this client uses, its tier and scope'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l id -d 'The operator id the key will be registered under [default: op-<random>]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l out -d 'Where to write the key [default: $XDG_CONFIG_HOME/scafo/keys/<id>.jwk]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from keygen" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l id -d 'The new operator id' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l public-key -d 'The public JWK file `scafo operators keygen` printed' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l role -d 'The key\'s tier' -r -f -a "operator\t''
admin\t''"
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l app -d 'An application scope pattern: *, a name, or a prefix glob like shop-*; repeatable' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from rotate" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand operators; and __fish_seen_subcommand_from whoami" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -l reason -d 'Why deploys are frozen, shown to whoever is refused one' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -f -a "status" -d 'Show whether deploys are frozen, since when, by whom and why'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and not __fish_seen_subcommand_from status lift" -f -a "lift" -d 'Lift the freeze: nodes take deploys again'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand freeze; and __fish_seen_subcommand_from lift" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -l url -d 'Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]' -r
complete -c scafo -n "__fish_scafo_using_subcommand completions" -l key -d 'Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]' -r -F
complete -c scafo -n "__fish_scafo_using_subcommand completions" -l token -d 'A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]' -r
complete -c scafo -n "__fish_scafo_using_subcommand completions" -l json -d 'Print machine-readable JSON'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s y -l yes -d 'Answer yes to confirmations (needed without a terminal)'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s v -l verbose -d 'More output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s V -l version -d 'Print version'
