package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LoadOptions steers Load. The zero value loads the standard RSB cascade for the current
// process: no defaults, the default files, os.Environ(), $HOME and the working directory.
// Tests inject every path so that nothing real is read.
type LoadOptions struct {
	// Defaults are the built-in values, the lowest priority source.
	Defaults map[string]string

	// Files, when non-nil, replaces the file list (it takes precedence over
	// RSB_CONFIG_FILES). Entries are paths or the placeholders %system, %prefix, %user
	// and %pwd. Relative paths are taken relative to Pwd.
	Files []string

	// Env is the environment as "NAME=value" entries; nil means os.Environ().
	Env []string

	// System is the %system file; empty means DefaultSystemFile.
	System string

	// Prefix is the installation prefix for %prefix ($Prefix/etc/rsb.conf); empty skips
	// that file.
	Prefix string

	// Home is the home directory for %user ($Home/.config/rsb.conf); empty means $HOME
	// from Env, and the file is skipped when that is empty too.
	Home string

	// Pwd is the directory of %pwd (./rsb.conf); empty means the working directory.
	Pwd string

	// Debug receives the step-by-step trace written when RSB_CONFIG_DEBUG is set; nil
	// means os.Stderr.
	Debug io.Writer

	// Logger receives warnings about tolerated problems; nil means slog.Default().
	Logger *slog.Logger
}

// loader carries the state of one Load call.
type loader struct {
	opts  LoadOptions
	env   map[string]string
	cfg   *Config
	log   *slog.Logger
	trace io.Writer // nil unless RSB_CONFIG_DEBUG is set
}

// fileSpec is one resolved entry of the file list.
type fileSpec struct {
	path     string // empty when the entry is skipped
	desc     string
	explicit bool // named by the user rather than a placeholder
}

// Load builds the configuration from the cascade described in the package documentation.
// A missing file is skipped; an unreadable, oversized or malformed one fails the load with
// an error naming it (ErrSyntax errors also name the line). Problems RSB would reject but
// rsbd tolerates (empty RSB_* values) are logged and kept in Config.Warnings.
func Load(opts LoadOptions) (*Config, error) {
	l := &loader{opts: opts, env: envMap(opts.Env), cfg: New(), log: opts.Logger}
	if l.log == nil {
		l.log = slog.Default()
	}
	if _, ok := l.env[EnvConfigDebug]; ok {
		l.trace = opts.Debug
		if l.trace == nil {
			l.trace = os.Stderr
		}
	}
	l.tracef("Configuring with sources (lowest priority first)\n")
	if err := l.loadDefaults(); err != nil {
		return nil, err
	}
	if err := l.loadFiles(); err != nil {
		return nil, err
	}
	l.loadEnv()
	return l.cfg, nil
}

// envMap turns "NAME=value" entries into a map; later duplicates win, as for exec.
func envMap(env []string) map[string]string {
	if env == nil {
		env = os.Environ()
	}
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

func (l *loader) tracef(format string, args ...any) {
	if l.trace != nil {
		fmt.Fprintf(l.trace, format, args...)
	}
}

func (l *loader) warn(msg string, args ...any) {
	l.cfg.warn(msg)
	l.log.Warn("config: "+msg, args...)
}

func (l *loader) loadDefaults() error {
	l.tracef("  1. Defaults\n")
	for _, k := range slices.Sorted(maps.Keys(l.opts.Defaults)) {
		key, err := NormalizeKey(k)
		if err != nil {
			return fmt.Errorf("config: default %q: %w", k, err)
		}
		l.cfg.set(key, l.opts.Defaults[k], Origin{Source: SourceDefault})
		l.tracef("     %s = %s\n", key, l.opts.Defaults[k])
	}
	return nil
}

func (l *loader) loadFiles() error {
	l.tracef("  2. Configuration files\n")
	specs, err := l.fileList()
	if err != nil {
		return err
	}
	for i, s := range specs {
		if err := l.loadFile(i+1, s); err != nil {
			return err
		}
	}
	return nil
}

// fileList resolves the file list to paths.
func (l *loader) fileList() ([]fileSpec, error) {
	list, from := DefaultFiles, "default"
	if l.opts.Files != nil {
		list, from = l.opts.Files, "LoadOptions.Files"
	} else if v, ok := l.env[EnvConfigFiles]; ok {
		list, from = nil, EnvConfigFiles
		for f := range strings.SplitSeq(v, ":") {
			if f != "" {
				list = append(list, f)
			}
		}
	}
	if len(list) > MaxFiles {
		return nil, fmt.Errorf("%w: %s lists %d files, limit %d", ErrTooManyFiles, from, len(list), MaxFiles)
	}
	l.tracef("     (file list: %s)\n", from)
	specs := make([]fileSpec, len(list))
	for i, f := range list {
		specs[i] = l.resolve(f)
	}
	return specs, nil
}

// resolve maps a placeholder or path to a fileSpec.
func (l *loader) resolve(f string) fileSpec {
	switch f {
	case PlaceholderSystem:
		p := l.opts.System
		if p == "" {
			p = DefaultSystemFile
		}
		return fileSpec{path: p, desc: "System wide config file"}
	case PlaceholderPrefix:
		if l.opts.Prefix == "" {
			return fileSpec{desc: "Prefix wide config file (no prefix configured)"}
		}
		return fileSpec{path: filepath.Join(l.opts.Prefix, "etc", FileName), desc: "Prefix wide config file"}
	case PlaceholderUser:
		home := l.opts.Home
		if home == "" {
			home = l.env["HOME"]
		}
		if home == "" {
			return fileSpec{desc: "User config file (no home directory)"}
		}
		return fileSpec{path: filepath.Join(home, ".config", FileName), desc: "User config file"}
	case PlaceholderPwd:
		return fileSpec{path: l.inPwd(FileName), desc: "Current directory file"}
	}
	return fileSpec{path: l.inPwd(f), desc: "User specified config file", explicit: true}
}

// inPwd makes a relative path relative to the configured working directory.
func (l *loader) inPwd(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	pwd := l.opts.Pwd
	if pwd == "" {
		if wd, err := os.Getwd(); err == nil {
			pwd = wd
		}
	}
	return filepath.Join(pwd, p)
}

// loadFile reads, parses and merges one file.
func (l *loader) loadFile(n int, s fileSpec) error {
	if s.path == "" {
		l.tracef("     %d. %s: skipped\n", n, s.desc)
		return nil
	}
	data, err := readFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		l.tracef("     %d. %s %q does not exist\n", n, s.desc, s.path)
		if s.explicit {
			l.warn("configuration file "+s.path+" does not exist", "file", s.path)
		}
		return nil
	}
	if err != nil {
		return err
	}
	entries, err := Parse(data, s.path)
	if err != nil {
		return err
	}
	l.tracef("     %d. %s %q exists: %d options\n", n, s.desc, s.path, len(entries))
	for _, e := range entries {
		l.cfg.set(e.Key, e.Value, Origin{Source: SourceFile, Name: s.path, Line: e.Line})
		l.tracef("        %s = %s\n", e.Key, e.Value)
	}
	return nil
}

// readFile reads a regular file of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config: %s is not a regular file", path)
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%w: %s has %d bytes, limit %d", ErrFileTooLarge, path, st.Size(), MaxFileSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s has more than %d bytes", ErrFileTooLarge, path, MaxFileSize)
	}
	return data, nil
}

// loadEnv merges the RSB_* environment variables in name order.
func (l *loader) loadEnv() {
	l.tracef("  3. Environment variables with prefix %s\n", EnvPrefix)
	found := false
	for _, name := range slices.Sorted(maps.Keys(l.env)) {
		if !strings.HasPrefix(name, EnvPrefix) || name == EnvConfigFiles || name == EnvConfigDebug {
			continue
		}
		found = true
		val := l.env[name]
		key, ok := EnvKey(name)
		switch {
		case !ok:
			l.tracef("     %s: ignored, not a valid key\n", name)
			l.warn("environment variable "+name+" does not name a valid key; ignored", "var", name)
		case val == "":
			l.tracef("     %s: ignored, empty value\n", name)
			l.warn("environment variable "+name+" is empty; ignored", "var", name)
		default:
			l.cfg.set(key, val, Origin{Source: SourceEnv, Name: name})
			l.tracef("     %s -> %s = %s\n", name, key, val)
		}
	}
	if !found {
		l.tracef("     <none>\n")
	}
}
