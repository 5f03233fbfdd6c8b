using System;

namespace Falconet.Http.Http1;

/// <summary>
/// Writes a response's HTTP/1.1 head (status line, headers, empty line) into the connection's output, and keeps the bytes
/// of its status line and known headers, with the header collection marking the value strings they came from as kept
/// (<see cref="ResponseHeaderCollection.TryKeepKnownValues"/>): when the next response of the connection
/// has the same status and the same known headers set to the same string instances (the shared Date value of the current
/// second, an application's static Content-Type), those bytes are copied as they are, without checking and encoding the
/// values again. A string never changes, so the same instances make the same bytes. The Content-Length line that followed
/// them is kept too, when nothing else followed: a response with the same length copies it with the rest. One per
/// connection.
/// </summary>
internal sealed class Http1ResponseHead
{
    // A status line and known headers longer than this are written each time rather than kept.
    private const int MaxRememberedBytes = 1024;

    private byte[]? _bytes;
    private int _length;
    private int _statusCode;
    private ulong _bits;

    // The Content-Length line kept after the remembered bytes (from _length to _lengthLineEnd, followed by the head's empty
    // line), and its value; none when _lengthLineEnd is 0.
    private int _lengthLineEnd;
    private long _contentLength;

    /// <summary>
    /// Writes the head of a response with <paramref name="statusCode"/> and <paramref name="headers"/>, then
    /// <paramref name="body"/> (a small body that follows the head at once, or none); checked and measured first, so
    /// nothing is written when it throws.
    /// </summary>
    /// <exception cref="InvalidOperationException">A header cannot be written (see <see cref="ResponseHeaderCollection.CopyTo"/>).</exception>
    public void Write(BlockChainWriter writer, int statusCode, ResponseHeaderCollection headers, ReadOnlySpan<byte> body = default)
    {
        if (TryWriteRemembered(writer, statusCode, headers, body))
        {
            return;
        }

        bool remembered = statusCode == _statusCode && _bytes is not null && headers.HasKeptKnownValues(_bits);
        bool lengthAlone = headers.TryGetContentLengthAlone(out long contentLength);
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
            remembered = singleValued && start <= MaxRememberedBytes && headers.TryKeepKnownValues();
            if (remembered)
            {
                Remember(destination[..start], statusCode, headers);
            }
        }

        int rest = headers.WriteRest(destination[start..]);
        int written = start + rest;
        if (remembered && lengthAlone && written + 4 <= _bytes!.Length)
        {
            // Kept with the empty line after it, so that a repeat copies the whole head at once.
            destination.Slice(start, rest).CopyTo(_bytes.AsSpan(start));
            "\r\n\r\n"u8.CopyTo(_bytes.AsSpan(written));
            _lengthLineEnd = written;
            _contentLength = contentLength;
        }

        "\r\n\r\n"u8.CopyTo(destination[written..]);
        written += 4;
        body.CopyTo(destination[written..]);
        writer.Advance(written + body.Length);
    }

    /// <summary>
    /// The free part of the kept bytes' buffer behind the remembered head (its Content-Length line and empty line included),
    /// where the next response's small body can wait to go out with that head in one copy
    /// (<see cref="TryWriteRemembered"/> with a spare body); empty while no head with its Content-Length line is remembered.
    /// It holds its bytes until this object writes a head other than the remembered one.
    /// </summary>
    public Span<byte> SpareRoom => _lengthLineEnd == 0 ? default : _bytes.AsSpan(_lengthLineEnd + 4);

    /// <summary>
    /// Writes the head and <paramref name="body"/> as <see cref="Write"/> does when the whole head but its empty line, the
    /// Content-Length line included, is the one written last: one copy, which also takes the first
    /// <paramref name="spareBody"/> bytes of <see cref="SpareRoom"/> as the start of the body. False, with nothing written,
    /// otherwise.
    /// </summary>
    public bool TryWriteRemembered(BlockChainWriter writer, int statusCode, ResponseHeaderCollection headers, ReadOnlySpan<byte> body,
        int spareBody = 0)
    {
        int headLength = _lengthLineEnd;
        if (headLength == 0 || statusCode != _statusCode || !headers.HasKeptKnownValues(_bits)
            || !headers.TryGetContentLengthAlone(out long contentLength) || contentLength != _contentLength)
        {
            return false;
        }

        headLength += 4 + spareBody;
        Span<byte> head = writer.GetSpan(headLength + body.Length);
        _bytes.AsSpan(0, headLength).CopyTo(head);
        if (!body.IsEmpty)
        {
            body.CopyTo(head[headLength..]);
        }

        writer.Advance(headLength + body.Length);
        return true;
    }

    private void Remember(ReadOnlySpan<byte> start, int statusCode, ResponseHeaderCollection headers)
    {
        if (_bytes is null || _bytes.Length < start.Length)
        {
            // Room for a small body behind the head too (SpareRoom).
            _bytes = new byte[Math.Max(start.Length * 2, 512)];
        }

        start.CopyTo(_bytes);
        _length = start.Length;
        _lengthLineEnd = 0;
        _statusCode = statusCode;
        _bits = headers.KnownBits;
    }
}
