# fish completion for ndagent-atif (made by man/completions.py)
complete -c ndagent-atif -s h -l help -d '-h'
complete -c ndagent-atif -l agent -x -a 'auto cursor claude codex gemini opencode antigravity copilot qwen amp' -d 'the agent whose stream each FILE is'
complete -c ndagent-atif -l max-line -x -d 'the longest line read, in bytes'
complete -c ndagent-atif -l strict -d 'make every warning an error'
complete -c ndagent-atif -s q -l quiet -d 'print no warnings, only errors'
complete -c ndagent-atif -l version -d 'print the version and exit'
complete -c ndagent-atif -l max-chars -x -d 'cut each argument and result string to N characters'
complete -c ndagent-atif -s j -l jobs -x -d 'read the FILEs in N processes'
