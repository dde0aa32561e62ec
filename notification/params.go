package notification

// Limits applied when decoding or encoding a Notification. RSB defines no such
// limits; these are far above what RSB clients send (RPC uses one cause, C++
// clients add one user info) and only bound the work a hostile peer can cause
// per notification beyond the size of its input.
const (
	// MaxCauses is the largest number of cause event ids accepted in one
	// notification.
	MaxCauses = 1024

	// MaxUserTimes is the largest number of user times accepted in one
	// notification's meta data.
	MaxUserTimes = 1024

	// MaxUserInfos is the largest number of user infos accepted in one
	// notification's meta data.
	MaxUserInfos = 1024
)
