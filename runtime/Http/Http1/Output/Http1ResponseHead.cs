using System;
using System.Numerics;

namespace Falconet.Http.Http1;

/// <summary>
/// Writes a response's HTTP/1.1 head (status line, headers, empty line) into the connection's output, and keeps the bytes
/// of its status line and known headers with the value strings they came from: when the next response of the connection
/// has the same status and the same known headers set to the same string instances (the shared Date value of the current
/// second, an application's static Content-Type), those bytes are copied as they are, without checking and encoding the
/// values again. A string never changes, so the same instances make the same bytes. One per connection.
/// </summary>
internal sealed class Http1ResponseHead
{
    // A status line and known headers longer than this are written each time rather than kept.
    private const int MaxRememberedBytes = 1024;

    private byte[]? _bytes;
    private int _length;
    private int _statusCode;
    private ulong _bits;
    private string?[] _values = [];

    /// <summary>
    /// Writes the head of a response with <paramref name="statusCode"/> and <paramref name="headers"/>, then
    /// <paramref name="body"/> (a small body that follows the head at once, or none); checked and measured first, so
    /// nothing is written when it throws.
    /// </summary>
    /// <exception cref="InvalidOperationException">A header cannot be written (see <see cref="ResponseHeaderCollection.CopyTo"/>).</exception>
    public void Write(BlockChainWriter writer, int statusCode, ResponseHeaderCollection headers, ReadOnlySpan<byte> body = default)
    {
        bool remembered = statusCode == _statusCode && _bytes is not null && headers.HasKnownValues(_bits, _values);
        ReadOnlySpan<byte> statusLine = HttpStatusLines.Get(statusCode);
        int start = remembered ? _length : statusLine.Length + headers.MeasureKnown();
        Span<byte> destination = writer.GetSpan(start + headers.MeasureRest() + 4 + body.Length);
        if (remembered)
        {
            _bytes.AsSpan(0, start).CopyTo(destination);
        }
        else
        {
            statusLine.CopyTo(destination);
            headers.WriteKnown(destination[statusLine.Length..], out bool singleValued);
            if (singleValued && start <= MaxRememberedBytes)
            {
                Remember(destination[..start], statusCode, headers);
            }
        }

        int written = start + headers.WriteRest(destination[start..]);
        "\r\n\r\n"u8.CopyTo(destination[written..]);
        written += 4;
        body.CopyTo(destination[written..]);
        writer.Advance(written + body.Length);
    }

    private void Remember(ReadOnlySpan<byte> start, int statusCode, ResponseHeaderCollection headers)
    {
        ulong bits = headers.KnownBits;
        int count = BitOperations.PopCount(bits);
        if (_values.Length < count)
        {
            _values = new string?[Math.Max(count, 8)];
        }

        if (_bytes is null || _bytes.Length < start.Length)
        {
            _bytes = new byte[Math.Max(start.Length, 256)];
        }

        start.CopyTo(_bytes);
        _length = start.Length;
        _statusCode = statusCode;
        _bits = bits;
        headers.GetKnownValues(_values);
    }
}
