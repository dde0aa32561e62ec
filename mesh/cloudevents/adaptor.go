package cloudevents

import (
	"github.com/rsbd/rsbd/cloudevent"
	"github.com/rsbd/rsbd/mesh"
	"github.com/rsbd/rsbd/mesh/frame"
)

// Protocol is the name the package's FrameAdaptor is registered under.
const Protocol = "cloudevents"

func init() { mesh.Register(Adaptor{}) }

// Adaptor is the FrameAdaptor of the CloudEvents protocol: its messages
// are structured CloudEvents in JSON.
type Adaptor struct{}

// Protocol returns "cloudevents".
func (Adaptor) Protocol() string { return Protocol }

// ToFrame decodes a structured CloudEvent and returns its EVENT frame.
func (Adaptor) ToFrame(msg []byte) (*frame.Frame, error) {
	e, err := cloudevent.Unmarshal(msg)
	if err != nil {
		return nil, err
	}
	return frame.FromCloudEvent(e)
}

// FromFrame returns the structured CloudEvent an EVENT frame carries.
func (Adaptor) FromFrame(f *frame.Frame) ([]byte, error) {
	e, err := f.CloudEvent()
	if err != nil {
		return nil, err
	}
	return cloudevent.Marshal(e)
}
