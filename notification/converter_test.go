package notification

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/proto/rsbpb"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
	"github.com/rsbd/rsbd/scope"
)

var converterCases = []struct {
	schema string
	value  any
	hex    string
}{
	{SchemaVoid, struct{}{}, ``},
	{SchemaBool, false, `00`},
	{SchemaBool, true, `01`},
	{SchemaInt32, int32(-2), `fe ff ff ff`},
	{SchemaInt32, int32(0x01020304), `04 03 02 01`},
	{SchemaUint32, uint32(0xdeadbeef), `ef be ad de`},
	{SchemaInt64, int64(-1), `ff ff ff ff ff ff ff ff`},
	{SchemaInt64, int64(0x0102030405060708), `08 07 06 05 04 03 02 01`},
	{SchemaUint64, uint64(math.MaxUint64 - 1), `fe ff ff ff ff ff ff ff`},
	{SchemaFloat, float32(1.5), `00 00 c0 3f`},
	{SchemaFloat, float32(math.Inf(-1)), `00 00 80 ff`},
	{SchemaDouble, 1.5, `00 00 00 00 00 00 f8 3f`},
	{SchemaDouble, math.Copysign(0, -1), `00 00 00 00 00 00 00 80`},
	{SchemaDouble, math.NaN(), `01 00 00 00 00 00 f8 7f`},
	{SchemaUTF8String, "", ``},
	{SchemaUTF8String, "hello0", `"hello0"`},
	{SchemaUTF8String, "grüß", `"gr" c3 bc c3 9f`},
	{SchemaASCIIString, "ping", `"ping"`},
	{SchemaBytes, []byte{0, 0xff}, `00 ff`},
	{SchemaByteArray, []byte{0xff, 0}, `ff 00`},
	{SchemaByteArray, []byte{}, ``},
	{SchemaScope, scope.MustParse("/a/b"), `"/a/b/"`},
	{SchemaScope, scope.Root, `"/"`},
	{".rsb.protocol.introspection.Bye", &introspection.Bye{Id: []byte{1, 2}}, `0a 02 01 02`},
}

func TestConvertersExactBytes(t *testing.T) {
	r := DefaultRegistry()
	for _, tt := range converterCases {
		c, err := r.ForSchema(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		want := unhex(t, tt.hex)
		got, err := c.Serialize(tt.value)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: Serialize(%v) = % x, %v; want % x", tt.schema, tt.value, got, err, want)
		}
		v, err := c.Deserialize(want)
		if err != nil || !valuesEqual(v, tt.value) {
			t.Errorf("%s: Deserialize(% x) = %v, %v; want %v", tt.schema, want, v, err, tt.value)
		}
		if reflect.TypeOf(v) != c.GoType() {
			t.Errorf("%s: Deserialize returns %T, GoType is %v", tt.schema, v, c.GoType())
		}
	}
}

func valuesEqual(a, b any) bool {
	if m, ok := a.(proto.Message); ok {
		n, ok := b.(proto.Message)
		return ok && proto.Equal(m, n)
	}
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	switch x := a.(type) {
	case float32: // compare bits so that NaN payloads count
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

func TestConvertersRejectBadPayloads(t *testing.T) {
	tests := []struct{ schema, hex string }{
		{SchemaVoid, `00`},
		{SchemaBool, ``}, {SchemaBool, `02`}, {SchemaBool, `00 00`},
		{SchemaInt32, `01 02 03`}, {SchemaInt32, `01 02 03 04 05`},
		{SchemaUint32, ``}, {SchemaInt64, `01 02 03 04`}, {SchemaUint64, `01 02 03 04 05 06 07 08 09`},
		{SchemaFloat, `00 00 00 00 00 00 00 00`}, {SchemaDouble, `00 00 00 00`},
		{SchemaUTF8String, `ff`}, {SchemaUTF8String, `"a" c3`},
		{SchemaASCIIString, `"a" c3 bc`},
		{SchemaScope, ``}, {SchemaScope, `"a/"`}, {SchemaScope, `"/a//"`},
		{".rsb.protocol.introspection.Bye", ``}, // id is required
		{".rsb.protocol.introspection.Hello", `0a`},
	}
	r := DefaultRegistry()
	for _, tt := range tests {
		v, err := r.Deserialize(tt.schema, unhex(t, tt.hex))
		if !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: Deserialize(%s) = %v, %v; want ErrBadPayload", tt.schema, tt.hex, v, err)
		}
	}
	if _, err := r.Deserialize(SchemaScope, []byte("/a//")); !errors.Is(err, scope.ErrInvalid) {
		t.Errorf("scope error %v does not wrap scope.ErrInvalid", err)
	}
}

func TestConvertersRejectBadValues(t *testing.T) {
	tests := []struct {
		schema  string
		value   any
		wantErr error
	}{
		{SchemaVoid, 0, ErrWrongType},
		{SchemaBool, 1, ErrWrongType},
		{SchemaInt32, int64(1), ErrWrongType},
		{SchemaDouble, float32(1), ErrWrongType},
		{SchemaUTF8String, []byte("x"), ErrWrongType},
		{SchemaUTF8String, "\xff", ErrInvalidValue},
		{SchemaASCIIString, "ä", ErrInvalidValue},
		{SchemaBytes, "x", ErrWrongType},
		{SchemaScope, "/a/", ErrWrongType},
		{SchemaScope, scope.Scope{}, ErrInvalidValue},
		{".rsb.protocol.introspection.Hello", &introspection.Bye{Id: []byte{1}}, ErrWrongType},
		{".rsb.protocol.introspection.Hello", &introspection.Hello{}, ErrInvalidValue},
	}
	r := DefaultRegistry()
	for _, tt := range tests {
		c, err := r.ForSchema(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := c.Serialize(tt.value); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: Serialize(%#v) = % x, %v; want %v", tt.schema, tt.value, b, err, tt.wantErr)
		}
	}
}

func TestDefaultRegistry(t *testing.T) {
	r := DefaultRegistry()
	want := []string{"void", "bool", "int32", "uint32", "int64", "uint64", "float", "double",
		"utf-8-string", "ascii-string", "bytes", ".*", "scope",
		".rsb.protocol.introspection.Hello", ".rsb.protocol.introspection.Bye"}
	got := r.Schemas()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Schemas() = %q, want %q", got, want)
	}
	byValue := []struct {
		value  any
		schema string
	}{
		{nil, "void"}, {struct{}{}, "void"}, {"s", "utf-8-string"}, {[]byte{1}, "bytes"},
		{true, "bool"}, {1.0, "double"}, {float32(1), "float"}, {int64(1), "int64"},
		{scope.Root, "scope"}, {&introspection.Hello{}, ".rsb.protocol.introspection.Hello"},
	}
	for _, tt := range byValue {
		c, err := r.ForValue(tt.value)
		if err != nil || c.WireSchema() != tt.schema {
			t.Errorf("ForValue(%#v) = %v, %v; want %s", tt.value, c, err, tt.schema)
		}
	}
	if _, err := r.ForSchema("uint128"); !errors.Is(err, ErrUnknownSchema) {
		t.Errorf("ForSchema(uint128): %v", err)
	}
	if _, err := r.ForValue(1); !errors.Is(err, ErrNoConverter) {
		t.Errorf("ForValue(int): %v", err)
	}
	if _, _, err := r.Serialize(struct{ X int }{}); !errors.Is(err, ErrNoConverter) {
		t.Errorf("Serialize(struct): %v", err)
	}
	if _, err := r.Deserialize(".rsb.protocol.EventId", nil); !errors.Is(err, ErrUnknownSchema) {
		t.Errorf("Deserialize(EventId): %v", err)
	}
	if err := r.Register(NewProtoConverter(&introspection.Bye{})); !errors.Is(err, ErrDuplicateSchema) {
		t.Errorf("registering Bye twice: %v", err)
	}
}

func TestRegistryProtoRoundTrip(t *testing.T) {
	var r Registry // the zero value is ready
	if err := r.Register(NewProtoConverter(&rsbpb.EventId{})); err != nil {
		t.Fatal(err)
	}
	id := &rsbpb.EventId{SenderId: make([]byte, 16), SequenceNumber: proto.Uint32(5)}
	schema, data, err := r.Serialize(id)
	if err != nil || schema != ".rsb.protocol.EventId" {
		t.Fatalf("Serialize = %q, %v", schema, err)
	}
	v, err := r.Deserialize(schema, data)
	if err != nil || !proto.Equal(v.(proto.Message), id) {
		t.Fatalf("Deserialize = %v, %v", v, err)
	}
	hello := &introspection.Hello{
		Kind: proto.String("listener"), Id: make([]byte, 16), Scope: proto.String("/a/"),
		Process: &operatingsystem.Process{Id: proto.String("42"), ProgramName: proto.String("p"), StartTime: proto.Uint64(1)},
		Host:    &operatingsystem.Host{Id: proto.String("h"), Hostname: proto.String("h")},
	}
	d := DefaultRegistry()
	schema, data, err = d.Serialize(hello)
	if err != nil {
		t.Fatal(err)
	}
	v, err = d.Deserialize(schema, data)
	if err != nil || !proto.Equal(v.(proto.Message), hello) {
		t.Fatalf("Hello round trip = %v, %v", v, err)
	}
}

func FuzzConverters(f *testing.F) {
	for _, tt := range converterCases {
		f.Add(tt.schema, unhex(f, tt.hex))
	}
	f.Add(".rsb.protocol.introspection.Hello", []byte{0x0a, 0x01, 'x', 0x12, 0x00})
	f.Add(SchemaUTF8String, []byte{0xed, 0xa0, 0x80})
	r := DefaultRegistry()
	f.Fuzz(func(t *testing.T, schema string, data []byte) {
		c, err := r.ForSchema(schema)
		if err != nil {
			return
		}
		v, err := c.Deserialize(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("%s: error %v does not wrap ErrBadPayload", schema, err)
			}
			return
		}
		out, err := c.Serialize(v)
		if err != nil {
			t.Fatalf("%s: Serialize(Deserialize(% x)): %v", schema, data, err)
		}
		// Scopes are normalized and protobuf messages may be encoded
		// non-canonically; everything else is byte-exact.
		if _, isProto := c.(*ProtoConverter); !isProto && schema != SchemaScope && !bytes.Equal(out, data) {
			t.Fatalf("%s: % x re-encodes to % x", schema, data, out)
		}
		v2, err := c.Deserialize(out)
		if err != nil || !valuesEqual(v, v2) {
			t.Fatalf("%s: re-decoding % x gives %v, %v; want %v", schema, out, v2, err, v)
		}
	})
}

func BenchmarkConverters(b *testing.B) {
	r := DefaultRegistry()
	for _, v := range []any{int64(42), 1.5, "hello world", scope.MustParse("/a/b/")} {
		c, _ := r.ForValue(v)
		b.Run(c.WireSchema(), func(b *testing.B) {
			for b.Loop() {
				data, _ := c.Serialize(v)
				if _, err := c.Deserialize(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRegistryConcurrent registers converters while other goroutines look
// them up (run with -race): a schema once found stays found, the first
// converter of a type keeps serving it, and of two goroutines registering
// one schema exactly one succeeds.
func TestRegistryConcurrent(t *testing.T) {
	var r Registry
	if _, err := r.ForSchema("bytes"); !errors.Is(err, ErrUnknownSchema) || len(r.Schemas()) != 0 {
		t.Fatalf("empty registry: %v, %q", err, r.Schemas())
	}
	builtins := builtinConverters()
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			seen := map[string]bool{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, c := range builtins {
					_, err := r.ForSchema(c.WireSchema())
					if err == nil {
						seen[c.WireSchema()] = true
					} else if seen[c.WireSchema()] {
						t.Errorf("%s found, then lost", c.WireSchema())
						return
					}
				}
				if c, err := r.ForType(reflect.TypeFor[[]byte]()); err == nil && c.WireSchema() != "bytes" {
					t.Errorf("[]byte served by %s", c.WireSchema())
					return
				}
			}
		})
	}
	var ok atomic.Int32
	var writers sync.WaitGroup
	for range 2 {
		writers.Go(func() {
			for _, c := range builtins {
				if err := r.Register(c); err == nil {
					ok.Add(1)
				} else if !errors.Is(err, ErrDuplicateSchema) {
					t.Error(err)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if int(ok.Load()) != len(builtins) || len(r.Schemas()) != len(builtins) {
		t.Fatalf("%d registrations succeeded, %d schemas; want %d", ok.Load(), len(r.Schemas()), len(builtins))
	}
}

// BenchmarkRegistryLookup is the per-event lookups of a publisher and a
// subscriber on two goroutines at once.
func BenchmarkRegistryLookup(b *testing.B) {
	r := DefaultRegistry()
	bt := reflect.TypeFor[[]byte]()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.ForType(bt); err != nil {
				b.Fatal(err)
			}
			if _, err := r.ForSchema("bytes"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
