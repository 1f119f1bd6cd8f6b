# fish completion for ndagent-validate (made by man/completions.py)
complete -c ndagent-validate -s h -l help -d 'show this help message and exit'
complete -c ndagent-validate -l agent -x -a 'auto cursor claude codex gemini' -d 'the agent whose stream each FILE is'
complete -c ndagent-validate -l max-line -x -d 'the longest line read, in bytes'
complete -c ndagent-validate -l version -d 'show program\'s version number and exit'
complete -c ndagent-validate -l strict -d 'make every warning an error'
complete -c ndagent-validate -s q -l quiet -d 'print no warnings, only errors'
complete -c ndagent-validate -l format -x -a 'text ndjson' -d 'text'
complete -c ndagent-validate -l color -x -a 'auto always never' -d 'colour the text diagnostics as compilers do'
