package main

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/rsbd/rsbd/introspection"
)

// monitor prints the tree and then follows the collectors until ctx ends:
// on a terminal it redraws the tree in place (and the latest changes
// below it) whenever something changed and at least every
// monitorRefresh; elsewhere it prints one line per change.
func monitor(ctx context.Context, cs []*introspection.Collector, snap func() introspection.Snapshot, out io.Writer) error {
	tty := isTerminal(out)
	if !tty {
		if err := introspection.WriteTree(out, snap(), time.Now()); err != nil {
			return err
		}
		for _, c := range cs {
			c.Changes() // printed in the tree already
		}
	}
	var recent []introspection.Change
	tick := time.NewTicker(monitorRefresh)
	defer tick.Stop()
	cases := make([]reflect.SelectCase, 0, len(cs)+2)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tick.C)})
	for _, c := range cs {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.Changed())})
	}
	for {
		var changes []introspection.Change
		for _, c := range cs {
			changes = append(changes, c.Changes()...)
		}
		if tty {
			recent = append(recent, changes...)
			recent = recent[max(0, len(recent)-monitorChanges):]
			if err := redraw(out, snap(), recent); err != nil {
				return err
			}
		} else {
			for _, ch := range changes {
				if _, err := fmt.Fprintln(out, ch.String()); err != nil {
					return err
				}
			}
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			return nil
		}
	}
}

// redraw clears the terminal and prints the tree and the latest changes.
func redraw(out io.Writer, s introspection.Snapshot, recent []introspection.Change) error {
	if _, err := io.WriteString(out, "\x1b[H\x1b[2J"); err != nil {
		return err
	}
	if err := introspection.WriteTree(out, s, time.Now()); err != nil {
		return err
	}
	if len(recent) > 0 {
		fmt.Fprintln(out, "\nLatest changes:")
	}
	for _, ch := range recent {
		if _, err := fmt.Fprintln(out, "  "+ch.String()); err != nil {
			return err
		}
	}
	return nil
}
