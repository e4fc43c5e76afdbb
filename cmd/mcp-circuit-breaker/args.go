package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag is the flag urfave/cli answers with completion candidates; it must stay the last
// argument.
const completionFlag = "--generate-bash-completion"

// interspersed reorders the command line so that every flag --help lists works wherever it is
// placed, which urfave/cli v2 does not do by itself:
//   - a command's flags after its positional arguments ("record TOOL --error TEXT", the documented
//     order) are moved before them: urfave stops reading flags at the first positional argument;
//   - a global flag after the command (classify --dir D, for a command without a --dir of its
//     own) is moved before the command;
//   - with --help, the positional arguments are dropped, so that "record --help TOOL" shows the
//     help of record instead of looking for a help topic named TOOL.
//
// Everything after "--" stays positional.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var tail []string
	if args[len(args)-1] == completionFlag {
		args, tail = args[:len(args)-1], []string{completionFlag}
	}
	global := []string{args[0]}
	i := 1
	// Global flags before the command.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		global = append(global, args[i])
		if takesValue(app.Flags, args[i]) && i+1 < len(args) {
			global = append(global, args[i+1])
			i++
		}
		i++
	}
	if i >= len(args) {
		return append(global, tail...)
	}
	cmd := findCommand(app.Commands, args[i])
	path := []string{args[i]}
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 && i < len(args) && !strings.HasPrefix(args[i], "-") {
		sub := findCommand(cmd.Subcommands, args[i])
		if sub == nil {
			break
		}
		path = append(path, args[i])
		cmd = sub
		i++
	}
	if cmd == nil {
		return append(append(append(global, path...), args[i:]...), tail...)
	}
	var flags, pos []string
	// help drops the positional arguments, and so does a flag left without its value: placed
	// last, it makes urfave say which flag needs an argument instead of taking "--" for its value.
	help, dangling := false, false
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			to := &flags
			if !defines(cmd.Flags, a) && defines(app.Flags, a) {
				to = &global
			}
			*to = append(*to, a)
			if takesValue(cmd.Flags, a) || (to == &global && takesValue(app.Flags, a)) {
				if i+1 < len(args) {
					*to = append(*to, args[i+1])
					i++
				} else {
					dangling = true
				}
			}
			help = help || a == "-h" || a == "--help"
		default:
			pos = append(pos, a)
		}
	}
	out := append(append(global, path...), flags...)
	if len(pos) > 0 && !help && !dangling {
		// urfave answers no completion request after "--", and none needs it: candidates are
		// commands and flags.
		if tail == nil {
			out = append(out, "--")
		}
		out = append(out, pos...)
	}
	return append(out, tail...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagNamed returns the flag among flags that the token a ("--name" or "--name=value") names.
func flagNamed(flags []cli.Flag, a string) cli.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// defines reports whether the token a names one of flags.
func defines(flags []cli.Flag, a string) bool { return flagNamed(flags, a) != nil }

// takesValue reports whether the flag token a (without "=value") names a flag that takes a value.
func takesValue(flags []cli.Flag, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	f := flagNamed(flags, a)
	if f == nil {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
