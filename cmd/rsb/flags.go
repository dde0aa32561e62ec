package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// errHelp is returned by parseArgs for -h/--help.
var errHelp = flag.ErrHelp

// listFlag collects the values of a repeatable flag.
type listFlag []string

// String joins the values (flag.Value).
func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set appends a value (flag.Value).
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// boolFlag is implemented by flag values that take no argument.
type boolFlag interface{ IsBoolFlag() bool }

// parseArgs parses flags anywhere among the arguments, as RSB's tools allow,
// and returns the positional arguments. "-" and arguments starting with "-:"
// (stdin event specs) and negative numbers are positional; "--" ends the
// flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if !isFlag(a) {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			return nil, errHelp
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown option %s", a)
		}
		if bf, ok := f.Value.(boolFlag); ok && bf.IsBoolFlag() && !hasValue {
			value = "true"
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("option %s needs a value", a)
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("option --%s: %w", name, errors.Unwrap(err))
		}
	}
	return pos, nil
}

// isFlag reports whether a looks like an option rather than an argument.
func isFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' || strings.HasPrefix(a, "-:") {
		return false
	}
	if _, err := strconv.ParseFloat(a, 64); err == nil {
		return false
	}
	return true
}

// keyValue splits "K=V" for --meta-data and --timestamp.
func keyValue(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("%q: want KEY=VALUE", s)
	}
	return k, v, nil
}
