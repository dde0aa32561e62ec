package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
)

// errIDL is wrapped by every error of loading or using .proto files.
var errIDL = errors.New("IDL")

// idlUsage documents the IDL options of send, call and logger.
const idlUsage = `  --idl-path DIR, -I DIR   where .proto files and their imports are found
                           (repeatable)
  --load-idl FILE, -l FILE load a .proto file (repeatable); its messages
                           can then be sent as pb:.package.Message:{...}
                           and are decoded when received
  --on-demand-idl-loading  load .package.Message from package/Message.proto
                           under an --idl-path when it is first needed
`

// idlFlags are the IDL options of a tool's command line.
type idlFlags struct {
	paths, files listFlag
	onDemand     bool
}

// register adds the IDL options to fs.
func (f *idlFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.paths, "idl-path", "")
	fs.Var(&f.paths, "I", "")
	fs.Var(&f.files, "load-idl", "")
	fs.Var(&f.files, "l", "")
	fs.BoolVar(&f.onDemand, "on-demand-idl-loading", false, "")
}

// sources loads the IDL files and returns where event specs read their
// payloads, pb: specs included.
func (f *idlFlags) sources(ctx context.Context, sio stdio) (specSources, error) {
	idl, err := f.load(ctx)
	if err != nil {
		return specSources{}, err
	}
	return specSources{stdin: sio.in, readFile: os.ReadFile, idl: idl,
		proto: func(spec string) (any, error) { return parseProtoSpec(ctx, spec, idl) }}, nil
}

// idlSet is the protobuf message types the tool learnt from .proto files
// parsed at run time. It is safe for concurrent use.
type idlSet struct {
	paths    []string
	onDemand bool

	mu       sync.Mutex
	messages map[protoreflect.FullName]protoreflect.MessageDescriptor
	tried    map[string]bool // on-demand files already attempted
}

// load parses the --load-idl files (with their imports) into a new set.
func (f *idlFlags) load(ctx context.Context) (*idlSet, error) {
	s := &idlSet{onDemand: f.onDemand, messages: map[protoreflect.FullName]protoreflect.MessageDescriptor{}, tried: map[string]bool{}}
	for _, p := range f.paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%w: --idl-path %s: %w", errIDL, p, err)
		}
		s.paths = append(s.paths, abs)
	}
	for _, file := range f.files {
		if err := s.compileFile(ctx, file); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// compileFile parses file by its path: relative to the --idl-path that
// holds it, else relative to its own directory (then searched for imports
// after the --idl-paths).
func (s *idlSet) compileFile(ctx context.Context, file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errIDL, file, err)
	}
	paths := s.paths
	name := ""
	for _, p := range s.paths {
		if rel, err := filepath.Rel(p, abs); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
			break
		}
	}
	if name == "" {
		paths = append(append([]string(nil), s.paths...), filepath.Dir(abs))
		name = filepath.Base(abs)
	}
	return s.compile(ctx, paths, name)
}

// compile parses name (found under paths) and indexes its messages.
func (s *idlSet) compile(ctx context.Context, paths []string, name string) error {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
	}
	files, err := c.Compile(ctx, name)
	if err != nil {
		return fmt.Errorf("%w: %w", errIDL, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range files {
		s.index(f.Messages())
	}
	return nil
}

// index adds the messages and their nested messages; s.mu is held.
func (s *idlSet) index(ms protoreflect.MessageDescriptors) {
	for i := range ms.Len() {
		m := ms.Get(i)
		if _, ok := s.messages[m.FullName()]; !ok {
			s.messages[m.FullName()] = m
		}
		s.index(m.Messages())
	}
}

// message returns the descriptor of the message a wire schema names
// (".package.Message"), loading it on demand if allowed.
func (s *idlSet) message(ctx context.Context, schema string) (protoreflect.MessageDescriptor, error) {
	if s == nil || !strings.HasPrefix(schema, ".") || len(schema) < 2 || len(schema) > maxMessageName {
		return nil, fmt.Errorf("%w: %q is not a protobuf wire schema (.package.Message)", errIDL, schema)
	}
	name := protoreflect.FullName(schema[1:])
	if !name.IsValid() {
		return nil, fmt.Errorf("%w: %q is not a message name", errIDL, schema)
	}
	if m := s.lookup(name); m != nil {
		return m, nil
	}
	if s.onDemand {
		for _, file := range onDemandFiles(name) {
			if s.attempt(file) && s.exists(file) {
				if err := s.compile(ctx, s.paths, file); err != nil {
					return nil, err
				}
				if m := s.lookup(name); m != nil {
					return m, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("%w: message %s not loaded (--load-idl, or --on-demand-idl-loading with --idl-path)", errIDL, name)
}

func (s *idlSet) lookup(name protoreflect.FullName) protoreflect.MessageDescriptor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messages[name]
}

// attempt reports whether file was not tried yet, and marks it tried.
func (s *idlSet) attempt(file string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tried[file] || len(s.tried) >= maxIDLFiles {
		return false
	}
	s.tried[file] = true
	return true
}

// exists reports whether file is under one of the --idl-paths.
func (s *idlSet) exists(file string) bool {
	for _, p := range s.paths {
		if fi, err := os.Stat(filepath.Join(p, filepath.FromSlash(file))); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// onDemandFiles are the files that may declare name, by the convention of
// one message per file named after it in its package's directory
// (a.b.Msg in a/b/Msg.proto); a nested message (a.b.Msg.Inner) is looked
// for in its outer messages' files.
func onDemandFiles(name protoreflect.FullName) []string {
	parts := strings.Split(string(name), ".")
	var files []string
	for n := len(parts); n >= 2; n-- {
		files = append(files, strings.Join(parts[:n], "/")+".proto")
	}
	return files
}

// parseProtoSpec turns "pb:.package.Message:{text format}" (the braces
// optional) into the message to send.
func parseProtoSpec(ctx context.Context, spec string, idl *idlSet) (*dynamicpb.Message, error) {
	rest := strings.TrimPrefix(spec, "pb:")
	schema, text, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, fmt.Errorf("%w: %q: want pb:.package.Message:{text format}", errSpec, spec)
	}
	md, err := idl.message(ctx, schema)
	if err != nil {
		return nil, err
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}") {
		text = text[1 : len(text)-1]
	}
	m := dynamicpb.NewMessage(md)
	if err := unmarshalText(text, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errSpec, schema, err)
	}
	return m, nil
}

// unmarshalText reads protobuf text format into m.
func unmarshalText(text string, m proto.Message) error {
	return prototext.Unmarshal([]byte(text), m)
}

// decodeIDL returns ev with its payload decoded by the loaded .proto files
// when the tool's registry did not know the wire schema; ev itself is
// shared and left alone.
func decodeIDL(ctx context.Context, idl *idlSet, ev *client.Event) *client.Event {
	if idl == nil || ev.Payload != nil || !errors.Is(ev.PayloadErr, notification.ErrUnknownSchema) {
		return ev
	}
	md, err := idl.message(ctx, ev.WireSchema)
	if err != nil {
		return ev
	}
	m := dynamicpb.NewMessage(md)
	out := &client.Event{Event: ev.Event}
	if err := proto.Unmarshal(ev.Data, m); err != nil {
		out.PayloadErr = fmt.Errorf("%w: %s: %w", notification.ErrBadPayload, ev.WireSchema, err)
		return out
	}
	out.Payload = m
	return out
}

// dynamicConverter converts one message type loaded from a .proto file;
// a tool registers the one it sends, as the Go type of every such message
// is the same.
type dynamicConverter struct {
	md protoreflect.MessageDescriptor
}

// WireSchema returns "." + the message's full name.
func (c dynamicConverter) WireSchema() string { return "." + string(c.md.FullName()) }

// GoType returns *dynamicpb.Message.
func (c dynamicConverter) GoType() reflect.Type { return reflect.TypeFor[*dynamicpb.Message]() }

// Serialize marshals a message of the converter's type.
func (c dynamicConverter) Serialize(v any) ([]byte, error) {
	m, ok := v.(*dynamicpb.Message)
	if !ok || m.Descriptor().FullName() != c.md.FullName() {
		return nil, fmt.Errorf("%w: %s wants its own message, got %T", notification.ErrWrongType, c.WireSchema(), v)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", notification.ErrInvalidValue, c.WireSchema(), err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Deserialize unmarshals a new message.
func (c dynamicConverter) Deserialize(data []byte) (any, error) {
	m := dynamicpb.NewMessage(c.md)
	if err := proto.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", notification.ErrBadPayload, c.WireSchema(), err)
	}
	return m, nil
}

// registryFor returns the registry a tool sends payload with: the default
// one, plus the converter of payload's type when it is a loaded message.
func registryFor(payload any) (*notification.Registry, error) {
	reg := notification.DefaultRegistry()
	if m, ok := payload.(*dynamicpb.Message); ok {
		if err := reg.Register(dynamicConverter{md: m.Descriptor()}); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
