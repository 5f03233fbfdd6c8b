using System;
using Falconet.Http.Http2.HPack;

namespace Falconet.Http.Http2;

// Response heads as header blocks: the connection's HPACK encoder (its dynamic table is the client decoder's, so blocks
// are encoded under the lock in the order their frames are queued), then HEADERS and CONTINUATION frames.
internal sealed partial class Http2Connection
{
    // The head of an interim 100 Continue: :status alone. Never written to.
    private static readonly ResponseHeaders s_noHeaders = new();

    private readonly HPackEncoder _encoder = new();
    private byte[] _encodeBuffer = new byte[1024];

    /// <summary>
    /// Encodes a response head (<paramref name="statusCode"/> 0: trailers, without :status) and writes it as HEADERS and
    /// CONTINUATION frames (under the lock). A head that cannot be encoded throws before the encoder's table changes or a
    /// byte is written.
    /// </summary>
    /// <exception cref="InvalidOperationException">A header value holds a control character, or a name is not a token.</exception>
    public void WriteHeadersLocked(int streamId, int statusCode, ResponseHeaders? headers, bool endStream)
    {
        headers ??= s_noHeaders;
        int length;
        while (!(statusCode == 0
            ? _encoder.TryEncodeTrailers(headers, _encodeBuffer, out length)
            : _encoder.TryEncodeResponseHeaders(statusCode, headers, _encodeBuffer, out length)))
        {
            // Larger than any head so far (the encoder's bound is computed once, inside the call that encodes).
            _encodeBuffer = new byte[Math.Max(HPackEncoder.GetMaxEncodedLength(headers), _encodeBuffer.Length * 2)];
        }

        Output.WriteHeaderBlock(streamId, _encodeBuffer.AsSpan(0, length), endStream);
        Output.TrackPeak();
    }

    /// <summary>The client's SETTINGS_HEADER_TABLE_SIZE: the encoder's table follows it (within its own cap) from the next block.</summary>
    private void SetEncoderTableSize(uint value) => _encoder.SetPeerMaxTableSize((int)Math.Min(value, int.MaxValue));
}
