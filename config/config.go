package config

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Source is the kind of place a value came from.
type Source uint8

// Sources, lowest priority first.
const (
	SourceDefault  Source = iota // registered by the program
	SourceFile                   // a configuration file
	SourceEnv                    // an RSB_* environment variable
	SourceOverride               // a flag or another programmatic override
)

// String returns the source name used in Dump output.
func (s Source) String() string {
	switch s {
	case SourceDefault:
		return "default"
	case SourceFile:
		return "file"
	case SourceEnv:
		return "env"
	case SourceOverride:
		return "override"
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// Origin says where a value came from.
type Origin struct {
	Source Source
	Name   string // file path, environment variable, or override description ("flag --join")
	Line   int    // 1-based line for SourceFile, else 0
}

// String formats the origin as "default", "/etc/rsb.conf:3", "env RSB_X" or the override
// description.
func (o Origin) String() string {
	switch o.Source {
	case SourceDefault:
		if o.Name != "" {
			return "default (" + o.Name + ")"
		}
		return "default"
	case SourceFile:
		return o.Name + ":" + strconv.Itoa(o.Line)
	case SourceEnv:
		return "env " + o.Name
	}
	if o.Name == "" {
		return o.Source.String()
	}
	return o.Name
}

// Value is the effective value of a key with its provenance.
type Value struct {
	String    string   // the raw value
	Origin    Origin   // where the effective value came from
	Overrides []Origin // origins this value replaced, oldest first, at most MaxOverrideHistory
}

// Config is the merged configuration tree. It is safe for concurrent use; its zero value
// is an empty tree.
type Config struct {
	mu       sync.RWMutex
	values   map[string]Value
	warnings []string
}

// New returns an empty configuration.
func New() *Config { return &Config{} }

// set stores value under the canonical key, remembering the origin it replaces.
func (c *Config) set(key, value string, o Origin) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.values == nil {
		c.values = make(map[string]Value)
	}
	v := Value{String: value, Origin: o}
	if old, ok := c.values[key]; ok {
		hist := append(slices.Clone(old.Overrides), old.Origin)
		if len(hist) > MaxOverrideHistory {
			hist = hist[len(hist)-MaxOverrideHistory:]
		}
		v.Overrides = hist
	}
	c.values[key] = v
}

// Set overrides key with value; origin describes who set it (for example "flag --join")
// and is shown by Dump. Set is for flags and programmatic overrides, the last source of
// the cascade. The key is normalized; an invalid key yields an error wrapping ErrSyntax.
func (c *Config) Set(key, value, origin string) error {
	k, err := NormalizeKey(key)
	if err != nil {
		return err
	}
	c.set(k, value, Origin{Source: SourceOverride, Name: origin})
	return nil
}

// SetDefault sets key to value with a default origin unless the key already has a value.
// It lets packages register defaults after Load without overriding any source.
func (c *Config) SetDefault(key, value string) error {
	k, err := NormalizeKey(key)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.values[k]; ok {
		return nil
	}
	if c.values == nil {
		c.values = make(map[string]Value)
	}
	c.values[k] = Value{String: value, Origin: Origin{Source: SourceDefault}}
	return nil
}

// SetFlags applies every flag of fs that was set on the command line as an override of
// FlagKey(name), with origin "flag --name". Flags named in skip (e.g. "config",
// "print-config") are not configuration keys and are left out.
func (c *Config) SetFlags(fs *flag.FlagSet, skip ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil || slices.Contains(skip, f.Name) {
			return
		}
		err = c.Set(FlagKey(f.Name), f.Value.String(), "flag --"+f.Name)
	})
	return err
}

// Get returns the value of key (in any spelling) and whether it is set.
func (c *Config) Get(key string) (Value, bool) {
	k, err := NormalizeKey(key)
	if err != nil {
		return Value{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.values[k]
	return v, ok
}

// Keys returns every key that has a value, sorted.
func (c *Config) Keys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.values))
}

// Sub returns a new Config holding the keys below prefix with "prefix." removed, values
// and origins unchanged: Sub("rsbd") of rsbd.socket.addr has socket.addr. The result is
// a copy; later changes to c do not show in it.
func (c *Config) Sub(prefix string) *Config {
	out := New()
	p, err := NormalizeKey(prefix)
	if err != nil {
		return out
	}
	p += "."
	c.mu.RLock()
	defer c.mu.RUnlock()
	for k, v := range c.values {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" {
			if out.values == nil {
				out.values = make(map[string]Value)
			}
			out.values[rest] = v
		}
	}
	return out
}

// Warnings returns the problems Load tolerated (for example empty RSB_* variables), in
// the order they were found.
func (c *Config) Warnings() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.warnings)
}

// warn records a tolerated problem.
func (c *Config) warn(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings = append(c.warnings, msg)
}

// Dump writes every effective key in sorted order as "key = value  # origin", adding the
// origins it replaced, one key per line. Values that would not read back as they are
// (containing '#', starting with '"', with surrounding spaces or non-printable characters)
// are written quoted, which Parse reads back.
func (c *Config) Dump(w io.Writer) error {
	c.mu.RLock()
	snap := make(map[string]Value, len(c.values))
	for k, v := range c.values {
		snap[k] = v
	}
	c.mu.RUnlock()
	for _, k := range slices.Sorted(maps.Keys(snap)) {
		v := snap[k]
		line := fmt.Sprintf("%s = %s  # %s", k, dumpValue(v.String), v.Origin)
		if len(v.Overrides) > 0 {
			prev := make([]string, len(v.Overrides))
			for i, o := range v.Overrides {
				prev[len(prev)-1-i] = o.String()
			}
			line += " (overrides " + strings.Join(prev, ", ") + ")"
		}
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return fmt.Errorf("config: dump: %w", err)
		}
	}
	return nil
}

// dumpValue quotes values that would not survive a round trip through Parse.
func dumpValue(s string) string {
	if strings.ContainsRune(s, '#') || strings.HasPrefix(s, `"`) || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
