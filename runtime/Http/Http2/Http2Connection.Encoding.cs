using System;
using System.Collections.Generic;
using Falconet.Http.Http2.HPack;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http.Http2;

// Response heads as header blocks. Every header goes out as a literal without indexing (RFC 7541 section 6.2.2), by its
// static-table name where it has one; the status by its static entry.
internal sealed partial class Http2Connection
{
    private byte[] _encodeBuffer = new byte[1024];

    /// <summary>
    /// Encodes a response head (<paramref name="statusCode"/> 0: trailers, without :status) and writes it as HEADERS and
    /// CONTINUATION frames (under the lock).
    /// </summary>
    /// <exception cref="InvalidOperationException">A header value holds a control character, or a name is not a token.</exception>
    public void WriteHeadersLocked(int streamId, int statusCode, ResponseHeaders? headers, bool endStream)
    {
        int length;
        while (!TryEncodeHead(statusCode, headers, _encodeBuffer, out length))
        {
            _encodeBuffer = new byte[_encodeBuffer.Length * 2];
        }

        Output.WriteHeaderBlock(streamId, _encodeBuffer.AsSpan(0, length), endStream);
        Output.TrackPeak();
    }

    private void SetEncoderTableSize(uint value)
    {
        // The head is encoded without the dynamic table: any size the client allows will do.
        _ = value;
    }

    private static bool TryEncodeHead(int statusCode, ResponseHeaders? headers, Span<byte> destination, out int length)
    {
        length = 0;
        if (statusCode != 0)
        {
            int index = HPackStaticTable.GetStatusIndex(statusCode);
            if (index != 0)
            {
                if (destination.Length < 1)
                {
                    return false;
                }

                destination[length++] = (byte)(0x80 | index);
            }
            else
            {
                if (!TryWriteLiteral(destination, ref length, HPackStaticTable.StatusNameIndex, ReadOnlySpan<byte>.Empty, statusCode.ToString(System.Globalization.CultureInfo.InvariantCulture)))
                {
                    return false;
                }
            }
        }

        if (headers is null)
        {
            return true;
        }

        Span<byte> name = stackalloc byte[256];
        foreach (KeyValuePair<string, StringValues> header in headers)
        {
            if (header.Key.Length > name.Length)
            {
                throw new InvalidOperationException($"The response header name '{header.Key}' is too long.");
            }

            for (int i = 0; i < header.Key.Length; i++)
            {
                char c = header.Key[i];
                if (c >= 128 || !Falconet.Text.HttpCharacters.IsTokenChar((byte)c))
                {
                    throw new InvalidOperationException($"The response header name '{header.Key}' is not a token.");
                }

                name[i] = (byte)char.ToLowerInvariant(c);
            }

            ReadOnlySpan<byte> lower = name[..header.Key.Length];
            foreach (string? value in header.Value)
            {
                if (value is null)
                {
                    continue;
                }

                foreach (char c in value)
                {
                    if (c > 0xFF || (c < 0x20 && c != '\t') || c == 0x7F)
                    {
                        throw new InvalidOperationException($"The value of the response header '{header.Key}' holds a control character or a character above U+00FF.");
                    }
                }

                if (!TryWriteLiteral(destination, ref length, 0, lower, value))
                {
                    return false;
                }
            }
        }

        return true;
    }

    private static bool TryWriteLiteral(Span<byte> destination, ref int length, int nameIndex, ReadOnlySpan<byte> name, string value)
    {
        int needed = 1 + 5 + name.Length + 5 + value.Length + 5;
        if (destination.Length - length < needed)
        {
            return false;
        }

        length += HPackInteger.Encode(nameIndex, 4, 0x00, destination[length..]);
        if (nameIndex == 0)
        {
            length += HPackInteger.Encode(name.Length, 7, 0x00, destination[length..]);
            name.CopyTo(destination[length..]);
            length += name.Length;
        }

        length += HPackInteger.Encode(value.Length, 7, 0x00, destination[length..]);
        System.Text.Encoding.Latin1.GetBytes(value, destination[length..]);
        length += value.Length;
        return true;
    }
}
