using System;
using System.Buffers;

namespace Falconet.Http.Http1;

/// <summary>Frames response body bytes in the chunked transfer coding (RFC 9112 section 7.1).</summary>
internal static class ChunkedResponseEncoder
{
    /// <summary>The last chunk and the end of the (empty) trailer section.</summary>
    public static ReadOnlySpan<byte> LastChunk => "0\r\n\r\n"u8;

    /// <summary>The CRLF that ends a chunk's data.</summary>
    public static ReadOnlySpan<byte> ChunkEnd => "\r\n"u8;

    private static ReadOnlySpan<byte> HexDigits => "0123456789abcdef"u8;

    /// <summary>Writes "{length in hex}\r\n", the line that opens a chunk of <paramref name="length"/> bytes (greater than 0).</summary>
    public static void WriteChunkHeader(IBufferWriter<byte> writer, long length)
    {
        Span<byte> line = writer.GetSpan(18);
        int written = FormatChunkHeader(line, length);
        writer.Advance(written);
    }

    /// <summary>Formats the chunk-size line into <paramref name="destination"/> (at least 18 bytes) and returns its length.</summary>
    public static int FormatChunkHeader(Span<byte> destination, long length)
    {
        if (length <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(length), "A data chunk holds at least one byte.");
        }

        int digits = (67 - (int)ulong.LeadingZeroCount((ulong)length)) >> 2;
        ReadOnlySpan<byte> hex = HexDigits;
        ulong value = (ulong)length;
        for (int i = digits - 1; i >= 0; i--)
        {
            destination[i] = hex[(int)(value & 0xF)];
            value >>= 4;
        }

        destination[digits] = (byte)'\r';
        destination[digits + 1] = (byte)'\n';
        return digits + 2;
    }
}
