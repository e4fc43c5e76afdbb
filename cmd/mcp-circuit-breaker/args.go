package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a command's flags before its positional arguments, so that the SPEC's
// "record TOOL --error TEXT" works: urfave/cli v2 stops reading flags at the first positional
// argument. Everything after "--" stays positional.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags before the command.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	cmd := findCommand(app.Commands, args[i])
	out = append(out, args[i])
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 && i < len(args) && !strings.HasPrefix(args[i], "-") {
		sub := findCommand(cmd.Subcommands, args[i])
		if sub == nil {
			break
		}
		out = append(out, args[i])
		cmd = sub
		i++
	}
	if cmd == nil {
		return append(out, args[i:]...)
	}
	var flags, pos []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			pos = append(pos, a)
		}
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag token a (without "=value") names a flag that takes a value.
func takesValue(flags []cli.Flag, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
