package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// completionOptions are the options of completion.
type completionOptions struct {
	globalOptions
	// Shell is bash, zsh or fish.
	Shell string
}

// bashCompletion and zshCompletion ask the binary itself for candidates: urfave/cli answers
// --generate-bash-completion with the commands, subcommands and flags of the command line before
// it (the scripts urfave/cli ships in autocomplete/, with the program named).
const bashCompletion = `# bash completion for mcp-circuit-breaker; load it with: source <(mcp-circuit-breaker completion bash)
_mcp_circuit_breaker_complete() {
  local cur words
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:$COMP_CWORD}")
  local opts
  if [[ "$cur" == "-"* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _mcp_circuit_breaker_complete mcp-circuit-breaker
`

const zshCompletion = `#compdef mcp-circuit-breaker
# zsh completion for mcp-circuit-breaker; load it with: source <(mcp-circuit-breaker completion zsh)
_mcp_circuit_breaker() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _mcp_circuit_breaker mcp-circuit-breaker
`

func completionCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: source <(mcp-circuit-breaker completion bash)\n" +
			"zsh:  source <(mcp-circuit-breaker completion zsh)\n" +
			"fish: mcp-circuit-breaker completion fish > ~/.config/fish/completions/mcp-circuit-breaker.fish",
		Action: func(c *cli.Context) error {
			opts, err := parseCompletion(c)
			if err != nil {
				return err
			}
			return runCompletion(opts, c.App, e)
		},
	}
}

func parseCompletion(c *cli.Context) (*completionOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	if c.NArg() != 1 {
		return nil, usagef("completion takes one shell: bash, zsh or fish")
	}
	opts := &completionOptions{globalOptions: g, Shell: c.Args().First()}
	switch opts.Shell {
	case "bash", "zsh", "fish":
	default:
		return nil, usagef("completion: %q is not bash, zsh or fish", opts.Shell)
	}
	return opts, nil
}

// runCompletion prints the script; fish's lists every command and flag, so it is generated from
// the app itself.
func runCompletion(opts *completionOptions, app *cli.App, e *Env) error {
	switch opts.Shell {
	case "bash":
		e.printf("%s", bashCompletion)
	case "zsh":
		e.printf("%s", zshCompletion)
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		// urfave names the commands' completions after App.Name already; drop the blank lines
		// between them.
		e.printf("%s\n", strings.TrimSpace(s))
	}
	return nil
}
