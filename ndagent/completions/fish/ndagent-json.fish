# fish completion for ndagent-json (made by man/completions.py)
complete -c ndagent-json -s h -l help -d '-h'
complete -c ndagent-json -l sessions -x -d 'read the session files that the agents keep in their defa...'
complete -c ndagent-json -l agent -x -a 'auto cursor claude codex gemini opencode antigravity copilot' -d 'the agent whose stream'
complete -c ndagent-json -l max-line -x -d 'the longest line read, in bytes'
complete -c ndagent-json -l strict -d 'make every warning an error'
complete -c ndagent-json -s q -l quiet -d 'print no warnings, only errors'
complete -c ndagent-json -l version -d 'print the version and exit'
