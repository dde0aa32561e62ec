package mesh

// Limits of the registry.
const (
	// MaxNameLen bounds a protocol name: names appear in configuration,
	// logs and metric labels.
	MaxNameLen = 32
)
