package config

// Limits and fixed names of the configuration loader. Configuration files are local, but
// they are parsed as untrusted input, so everything read from them is bounded.
const (
	// MaxFileSize bounds one configuration file. RSB configuration files are a few hundred
	// bytes; a larger file is rejected rather than read into memory.
	MaxFileSize = 1 << 20

	// MaxFiles bounds the number of entries of a file list (RSB_CONFIG_FILES or
	// LoadOptions.Files).
	MaxFiles = 64

	// MaxOverrideHistory bounds how many replaced origins a value remembers for Dump.
	MaxOverrideHistory = 8

	// DefaultSystemFile is the system-wide configuration file (%system).
	DefaultSystemFile = "/etc/rsb.conf"

	// FileName is the base name of the %prefix, %user and %pwd configuration files.
	FileName = "rsb.conf"

	// EnvPrefix starts every environment variable the loader reads.
	EnvPrefix = "RSB_"

	// EnvConfigFiles names the variable whose ':'-separated value replaces the default
	// file list. It is not entered into the tree.
	EnvConfigFiles = "RSB_CONFIG_FILES"

	// EnvConfigDebug names the variable that, set to any value, makes Load trace its
	// steps. It is not entered into the tree.
	EnvConfigDebug = "RSB_CONFIG_DEBUG"
)

// File list placeholders, as RSB defines them for RSB_CONFIG_FILES.
const (
	PlaceholderSystem = "%system" // DefaultSystemFile or LoadOptions.System
	PlaceholderPrefix = "%prefix" // $prefix/etc/rsb.conf; skipped without a prefix
	PlaceholderUser   = "%user"   // $HOME/.config/rsb.conf; skipped without a home
	PlaceholderPwd    = "%pwd"    // ./rsb.conf in the working directory
)

// DefaultFiles is the file list used when neither LoadOptions.Files nor RSB_CONFIG_FILES
// gives one, lowest priority first.
var DefaultFiles = []string{PlaceholderSystem, PlaceholderPrefix, PlaceholderUser, PlaceholderPwd}
