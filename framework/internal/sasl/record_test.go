package sasl

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecord(t *testing.T) {
	body := AppendRequest(nil, []byte("token"))
	require.Equal(t, []byte{0, 0, 0, 5, 't', 'o', 'k', 'e', 'n'}, body)
	token, err := DecodeResponse(body)
	require.NoError(t, err)
	require.Equal(t, []byte("token"), token)

	// The null buffer of a server with nothing more to say.
	token, err = DecodeResponse([]byte{0xff, 0xff, 0xff, 0xff})
	require.NoError(t, err)
	require.Nil(t, token)

	huge := binary.BigEndian.AppendUint32(nil, MaxTokenSize+1)
	for name, bad := range map[string][]byte{
		"empty":          nil,
		"short":          {0, 0, 1},
		"negative":       {0xff, 0xff, 0xff, 0xfe},
		"null with more": {0xff, 0xff, 0xff, 0xff, 0},
		"truncated":      {0, 0, 0, 5, 't'},
		"trailing":       {0, 0, 0, 1, 't', 'x'},
		"oversized":      append(huge, make([]byte, MaxTokenSize+1)...),
	} {
		_, err := DecodeResponse(bad)
		require.ErrorIs(t, err, ErrMalformedRecord, name)
	}
	_, err = DecodeResponse(huge)
	require.ErrorIs(t, err, ErrTokenTooLarge)
}
