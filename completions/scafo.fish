# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_scafo_global_optspecs
    string join \n v/verbose q/quiet h/help V/version
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

complete -c scafo -n "__fish_scafo_needs_command" -s v -l verbose -d 'More log output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_needs_command" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_needs_command" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_needs_command" -f -a "sail" -d 'Run a node: the HTTP control API, heartbeats and the registry'
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
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s v -l verbose -d 'More log output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c scafo -n "__fish_scafo_using_subcommand sail" -s V -l version -d 'Print version'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s v -l verbose -d 'More log output (-v debug, -vv trace)'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s q -l quiet -d 'Only warnings and errors'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s h -l help -d 'Print help'
complete -c scafo -n "__fish_scafo_using_subcommand completions" -s V -l version -d 'Print version'
