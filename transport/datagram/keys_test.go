package datagram

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	k1, k2 := testKey(1), testKey(9)
	text := "# rsbd keys\n\n 9 " + hex.EncodeToString(k2.Secret[:]) + "\n" +
		"1\t" + base64.StdEncoding.EncodeToString(k1.Secret[:]) + "  \n# old key above\n"
	keys, err := ParseKeys([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != k2 || keys[1] != k1 {
		t.Fatalf("keys %v", keys)
	}
}

func TestParseKeysRejects(t *testing.T) {
	good := hex.EncodeToString(make([]byte, KeySize))
	for name, text := range map[string]string{
		"empty":         "",
		"comments only": "# nothing\n",
		"no key":        "1\n",
		"extra field":   "1 " + good + " x\n",
		"id 0":          "0 " + good,
		"id 256":        "256 " + good,
		"id not number": "a " + good,
		"short hex":     "1 " + good[2:],
		"bad hex":       "1 " + strings.Repeat("z", 64),
		"bad base64":    "1 " + strings.Repeat("*", 44),
		"short base64":  "1 " + base64.StdEncoding.EncodeToString(make([]byte, 31)) + "AAAA",
		"repeated id":   "1 " + good + "\n1 " + good,
		"too large":     strings.Repeat("#", MaxKeyFileSize+1),
	} {
		if _, err := ParseKeys([]byte(text)); !errors.Is(err, ErrKeyFile) {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(err.Error(), good) {
			t.Errorf("%s: error shows the key", name)
		}
	}
}

// FuzzParseKeys checks that ParseKeys never panics, and that whatever it
// accepts is a usable keyring with distinct non-zero ids.
func FuzzParseKeys(f *testing.F) {
	k := testKey(3)
	f.Add([]byte("3 " + hex.EncodeToString(k.Secret[:]) + "\n"))
	f.Add([]byte("# c\n1 " + base64.StdEncoding.EncodeToString(k.Secret[:]) + "\n2 " + hex.EncodeToString(k.Secret[:])))
	f.Add([]byte("1 x\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		keys, err := ParseKeys(text)
		if err != nil {
			return
		}
		if _, err := NewSealer("fuzz", keys); err != nil {
			t.Fatalf("accepted keys make no Sealer: %v", err)
		}
	})
}
