package grpcbus

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/rsbd/rsbd/client"
)

type dtoLabel = dto.LabelPair

// rawFrame is an event carrying data as a frame to srv's endpoint.
func rawFrame(srv *Server, data []byte) *client.Event {
	ev := &client.Event{}
	ev.Scope, ev.Method, ev.WireSchema, ev.Data = srv.ep.scope, methodFrame, wireSchemaRaw, data
	ev.MetaData.SetUserInfo(keyWireFormat, WireProto)
	return ev
}
