package cloudevent

// Limits of the CloudEvents mapping and JSON format. They match the limits
// of the mesh frame (package mesh/frame), so every valid Event fits an EVENT
// frame.
const (
	// SpecVersion is the CloudEvents version this package speaks; Events
	// carry it implied.
	SpecVersion = "1.0"

	// MaxNameLen is the longest attribute name, in characters: the
	// CloudEvents specification asks names to be at most 20 characters
	// long, and this package makes that a rule.
	MaxNameLen = 20

	// MaxValueBytes bounds an attribute's value in bytes: a frame attribute
	// value is at most 4 KiB, and an HTTP header of that size passes every
	// common server.
	MaxValueBytes = 4 << 10

	// MaxAttributes bounds the attributes of one event, specversion and the
	// other required ones included: a frame carries at most 64.
	MaxAttributes = 64

	// MaxDataBytes bounds an event's data: a frame's data is at most 8 MiB.
	MaxDataBytes = 8 << 20

	// MaxEventJSONBytes bounds one structured event in JSON: the largest
	// data base64-encoded (4/3 of MaxDataBytes) and its attributes, with
	// room for JSON escapes.
	MaxEventJSONBytes = 12 << 20

	// MaxBatchBytes bounds a batch in JSON, the size of a whole frame.
	MaxBatchBytes = 16 << 20

	// MaxBatchEvents bounds the events of one batch, so a batch of tiny
	// events cannot make a receiver publish without end.
	MaxBatchEvents = 1024

	// DefaultType is the type of an RSB event that names no "ce:type".
	DefaultType = "rsb.event"

	// MediaType is the media type of a structured event in JSON.
	MediaType = "application/cloudevents+json"

	// BatchMediaType is the media type of a batch of events in JSON.
	BatchMediaType = "application/cloudevents-batch+json"
)
