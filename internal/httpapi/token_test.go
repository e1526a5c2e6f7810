package httpapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenBits(t *testing.T) {
	for _, tt := range []struct {
		name, token string
		strong      bool
	}{
		{"one byte", "x", false},
		{"a word", "s3cret-token", false},
		{"openssl rand -hex 32", "9f2c4e8a1b7d3f6059e1c2a4b8d7f3e6019a5c7e2b4d6f8a1c3e5a7b9d0f2e4c", true},
		{"openssl rand -hex 16", "9f2c4e8a1b7d3f6059e1c2a4b8d7f3e6", true},
		{"openssl rand -hex 15", "9f2c4e8a1b7d3f6059e1c2a4b8d7f3", false},
		{"openssl rand -base64 16", "n3Jq0Zt+8yVb1LxW4e9KcQ==", true},
		{"openssl rand -base64 12", "n3Jq0Zt+8yVb1LxW", false},
		{"upper-case hex", "9F2C4E8A1B7D3F6059E1C2A4B8D7F3E6", true},
		{"40 random decimal digits", "8612967960454143067509650528651767914602", true},
		{"40 decimal digits whose last 10 repeat the 10 before", "8273645190283746510293847561029384756102", false},
		{"38 decimal digits", "82736451902837465102938475610293847561", false},
		{"64 times one character", strings.Repeat("a", 64), false},
		{"a repeated pair", strings.Repeat("ab", 40), false},
		{"printable ASCII", "k#9!Lp@2$Xv%4^Zq&7*", false},
		{"long printable ASCII", "k#9!Lp@2$Xv%4^Zq&7*Ry(5)", true},
		// Repeated words: the bits of one copy (the old estimate counted every copy).
		{"abcdefgh six times", strings.Repeat("abcdefgh", 6), false},
		{"password1 six times", strings.Repeat("password1", 6), false},
		{"the hex digits twice", strings.Repeat("0123456789abcdef", 2), false},
		{"a random hex 16 twice", strings.Repeat("dffc0f973f3b13ee192d9945593407e8", 2), true},
		{"a random hex 8 four times", strings.Repeat("dffc0f973f3b13ee", 4), false},
		{"a word and a tail", strings.Repeat("s3cret-token", 8) + "x", false},
		{"48 times one character", strings.Repeat("a", 48), false},
		// Real random tokens.
		{"another openssl rand -hex 16", "dffc0f973f3b13ee192d9945593407e8", true},
		{"another openssl rand -hex 32", "ec7e61f413e0f5043deb2a9dd78810def583111e968c2feb8f3029290f6a33f3", true},
		{"another openssl rand -base64 16", "8YpzPN6XdPmzSlQ5cbsMnw==", true},
		{"openssl rand -base64 32", "hcCcvClt2xSWk9tFATrPtHT3bd61XQKahUax+CNidps=", true},
		{"base64url of 24 bytes", "dEe9OCl30NnEcF0adVd-iKNJUboRkMiJ", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokenBits(tt.token) >= minTokenBits; got != tt.strong {
				t.Fatalf("tokenBits(%q) = %.1f, strong %v, want %v", tt.token, tokenBits(tt.token), got, tt.strong)
			}
		})
	}
}

// TestWeakTokenRefusedOffLoopback: a server others can reach refuses a token of fewer than 16
// random bytes, in one line that says how to make one; on loopback any token does.
func TestWeakTokenRefusedOffLoopback(t *testing.T) {
	dir := t.TempDir()
	write := func(name, token string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	weak, strong := write("weak", "x"), write("strong", "9f2c4e8a1b7d3f6059e1c2a4b8d7f3e6019a5c7e2b4d6f8a1c3e5a7b9d0f2e4c")
	repeated := write("repeated", strings.Repeat("password1", 6))
	m := newTestServer(t).m
	for _, tt := range []struct {
		name, addr, file, want string
	}{
		{"weak on all interfaces", "0.0.0.0:0", weak, "holds a weak token (about 0 random bits; a server on the non-loopback address 0.0.0.0:0 needs 128, 16 random bytes); make one: openssl rand -hex 32 > "},
		{"weak without a host", ":0", weak, "weak token"},
		{"weak on IPv6's all interfaces", "[::]:0", weak, "weak token"},
		{"a word repeated on all interfaces", "0.0.0.0:0", repeated, "holds a weak token (about 60 random bits;"},
		{"weak on loopback", "127.0.0.1:0", weak, ""},
		{"weak on localhost", "localhost:0", weak, ""},
		{"strong on all interfaces", "0.0.0.0:0", strong, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Config{Addr: tt.addr, TokenFile: tt.file, Manager: m})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v, want one line with %q", err, tt.want)
			}
		})
	}
}
