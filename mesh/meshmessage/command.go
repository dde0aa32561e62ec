package meshmessage

// Command names a Package's command. On the wire it is the name, never
// the number.
type Command string

// The commands of the legacy TCP protocol, with their reference numbers
// in comments.
const (
	HeartbeatRequest            Command = "HEARTBEAT_REQUEST"               // 0
	HeartbeatResponse           Command = "HEARTBEAT_RESPONSE"              // 1
	HelloRequest                Command = "HELLO_REQUEST"                   // 2
	HelloResponse               Command = "HELLO_RESPONSE"                  // 3
	ClientGoodbyeRequest        Command = "CLIENT_GOODBYE_REQUEST"          // 4
	ClientGoodbyeResponse       Command = "CLIENT_GOODBYE_RESPONSE"         // 5
	ServerGoodbyeRequest        Command = "SERVER_GOODBYE_REQUEST"          // 6
	ServerGoodbyeResponse       Command = "SERVER_GOODBYE_RESPONSE"         // 7
	SubscribeRequest            Command = "SUBSCRIBE_REQUEST"               // 8
	SubscribeResponse           Command = "SUBSCRIBE_RESPONSE"              // 9
	UnsubscribeRequest          Command = "UNSUBSCRIBE_REQUEST"             // 10
	UnsubscribeResponse         Command = "UNSUBSCRIBE_RESPONSE"            // 11
	ListenRequest               Command = "LISTEN_REQUEST"                  // 12
	ListenResponse              Command = "LISTEN_RESPONSE"                 // 13
	RequestToServer             Command = "REQUEST_TO_SERVER"               // 14
	RequestToClient             Command = "REQUEST_TO_CLIENT"               // 15
	RequestToClientAck          Command = "REQUEST_TO_CLIENT_ACK"           // 16
	ResponseToServer            Command = "RESPONSE_TO_SERVER"              // 17
	ResponseToClient            Command = "RESPONSE_TO_CLIENT"              // 18
	ResponseToClientAck         Command = "RESPONSE_TO_CLIENT_ACK"          // 19
	AsyncMessageToServer        Command = "ASYNC_MESSAGE_TO_SERVER"         // 20
	AsyncMessageToServerAck     Command = "ASYNC_MESSAGE_TO_SERVER_ACK"     // 21
	AsyncMessageToClient        Command = "ASYNC_MESSAGE_TO_CLIENT"         // 22
	AsyncMessageToClientAck     Command = "ASYNC_MESSAGE_TO_CLIENT_ACK"     // 23
	BroadcastMessageToServer    Command = "BROADCAST_MESSAGE_TO_SERVER"     // 24
	BroadcastMessageToServerAck Command = "BROADCAST_MESSAGE_TO_SERVER_ACK" // 25
	BroadcastMessageToClient    Command = "BROADCAST_MESSAGE_TO_CLIENT"     // 26
	BroadcastMessageToClientAck Command = "BROADCAST_MESSAGE_TO_CLIENT_ACK" // 27
)

// Header property keys and values of the reference.
const (
	// PropProtocolType names the body's form: ProtocolCloudEvents or
	// ProtocolMeshMessage.
	PropProtocolType = "protocoltype"
	// PropProtocolVersion is the version of the body's protocol.
	PropProtocolVersion = "protocolversion"
	// PropProtocolDesc names the transport: tcp, http or grpc-cloud-event.
	PropProtocolDesc = "protocoldesc"
	// ProtocolCloudEvents: the body is a CloudEvent in JSON.
	ProtocolCloudEvents = "cloudevents"
	// ProtocolMeshMessage: the body is an EventMeshMessage in JSON.
	ProtocolMeshMessage = "eventmeshmessage"
)

// Result codes of a response's header, the reference's OPStatus.
const (
	// CodeSuccess: the request succeeded.
	CodeSuccess = 0
	// CodeFail: the request failed; desc says why.
	CodeFail = 1
	// CodeACLFail: the client's token is missing or unknown, or does not
	// allow the topic.
	CodeACLFail = 2
	// CodeOverload: the listener is at a bound; the client may retry.
	CodeOverload = 3
)
