package sseclient

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRead(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than the reader's buffer
	tests := []struct {
		name   string
		stream string
		stopAt int      // fn returns false at this event (1-based); 0: never
		want   []string // "seq type data" of each event fn was given
	}{
		{"events", "id: 1\nevent: phase\ndata: {\"a\":1}\n\nid: 2\nevent: result\ndata: {}\n\n", 0,
			[]string{"1 phase {\"a\":1}", "2 result {}"}},
		{"CRLF and comments", ": keep-alive\r\n\r\nid: 7\r\nevent: log\r\ndata: hi\r\n\r\n", 0,
			[]string{"7 log hi"}},
		{"data lines joined", "id: 3\ndata: ab\ndata: cd\n\n", 0, []string{"3  abcd"}},
		{"a line longer than the buffer", "id: 4\nevent: big\ndata: " + long + "\n\n", 0,
			[]string{"4 big " + long}},
		{"stopped by fn", "id: 1\nevent: a\n\nid: 2\nevent: b\n\nid: 3\nevent: c\n\n", 2,
			[]string{"1 a ", "2 b "}},
		{"an unended event is dropped", "id: 1\nevent: a\n\nid: 2\nevent: b\n", 0, []string{"1 a "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := Read(iotest.OneByteReader(strings.NewReader(tt.stream)), func(ev Event) bool {
				if ev.Received.IsZero() {
					t.Errorf("event %d has no time it was received", ev.Seq)
				}
				got = append(got, strings.Join([]string{strconv.FormatInt(ev.Seq, 10), ev.Type, string(ev.Data)}, " "))
				return len(got) != tt.stopAt
			})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%.200q\nwant:\n%.200q", got, tt.want)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("id: 1\nevent: a\n\nid: 2"), iotest.ErrReader(boom))
	n := 0
	err := Read(r, func(Event) bool { n++; return true })
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("Read = %v after %d events, want %v after 1", err, n, boom)
	}
}
