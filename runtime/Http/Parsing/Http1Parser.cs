using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using Falconet.Text;

namespace Falconet.Http;

/// <summary>The allocation-free HTTP/1.1 request parser (RFC 9112): request line and header section, generic over struct handlers.</summary>
/// <remarks>
/// Each method works on a <see cref="SequenceReader{T}"/> over whatever has been received so far. A complete line
/// inside one segment is parsed in place; a line that crosses segments is first copied to a stack (or pooled)
/// buffer. Nothing is consumed from a line until all of it is present, so a caller retries with more data.
/// </remarks>
public static partial class Http1Parser
{
    // Lines that cross segments and fit here are copied to the stack; longer ones to a pooled array.
    private const int StackCopySize = 512;

    /// <summary>Parses the request line; true when it was parsed, handed to the handler and consumed, false when more data is needed.</summary>
    /// <exception cref="BadHttpRequestException">400 malformed, 414 longer than the limit (also while incomplete), 505 unsupported version.</exception>
    public static bool TryParseRequestLine<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits)
        where T : struct, IHttpRequestLineHandler
    {
        ReadOnlySpan<byte> span = reader.UnreadSpan;
        int lineFeed = span.IndexOf((byte)'\n');
        if (lineFeed < 0)
        {
            return TryParseRequestLineAcrossSegments(ref handler, ref reader, limits);
        }

        int length = lineFeed + 1;
        if (length > limits.MaxRequestLineSize)
        {
            BadHttpRequestException.Throw("Request line too long.", 414);
        }

        ParseRequestLine(ref handler, span[..length]);
        reader.Advance(length);
        return true;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit]
    private static bool TryParseRequestLineAcrossSegments<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits)
        where T : struct, IHttpRequestLineHandler
    {
        int max = limits.MaxRequestLineSize;
        if (!TryFindLine(ref reader, max, out int length))
        {
            if (reader.Remaining >= max)
            {
                BadHttpRequestException.Throw("Request line too long.", 414);
            }

            return false;
        }

        Span<byte> line = Copy(reader.UnreadSequence.Slice(0, length), stackalloc byte[StackCopySize], out byte[]? rented);
        try
        {
            ParseRequestLine(ref handler, line);
        }
        finally
        {
            ReturnCopy(rented);
        }

        reader.Advance(length);
        return true;
    }

    /// <summary>Finds the next LF within the first <paramref name="max"/> unread bytes; length counts the LF.</summary>
    private static bool TryFindLine(ref SequenceReader<byte> reader, int max, out int length)
    {
        ReadOnlySequence<byte> window = reader.UnreadSequence;
        if (window.Length > max)
        {
            window = window.Slice(0, max);
        }

        SequencePosition? lineFeed = window.PositionOf((byte)'\n');
        if (lineFeed is null)
        {
            length = 0;
            return false;
        }

        length = (int)window.Slice(0, lineFeed.Value).Length + 1;
        return true;
    }

    /// <summary>Copies <paramref name="source"/> into <paramref name="stackBuffer"/> when it fits, else into a pooled array for <see cref="ReturnCopy"/>.</summary>
    private static Span<byte> Copy(ReadOnlySequence<byte> source, Span<byte> stackBuffer, out byte[]? rented)
    {
        int length = (int)source.Length;
        rented = null;
        Span<byte> copy = length <= stackBuffer.Length
            ? stackBuffer[..length]
            : (rented = ArrayPool<byte>.Shared.Rent(length)).AsSpan(0, length);
        source.CopyTo(copy);
        return copy;
    }

    private static void ReturnCopy(byte[]? rented)
    {
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Parses one complete request line, CRLF included, and hands it to the handler.</summary>
    private static void ParseRequestLine<T>(ref T handler, ReadOnlySpan<byte> line)
        where T : struct, IHttpRequestLineHandler
    {
        int contentLength = line.Length - 2;
        if (contentLength < 0 || line[contentLength] != (byte)'\r')
        {
            BadHttpRequestException.Throw("Request line ends with a bare LF.");
        }

        ReadOnlySpan<byte> content = line[..contentLength];
        KnownMethod method = KnownMethods.Match(content, out int methodLength);
        if (method == KnownMethod.None)
        {
            BadHttpRequestException.Throw("Invalid request method.");
        }

        // Match guarantees content[methodLength] is the single SP after the token.
        ReadOnlySpan<byte> rest = content[(methodLength + 1)..];
        int targetLength = rest.IndexOf((byte)' ');
        if (targetLength <= 0)
        {
            BadHttpRequestException.Throw(targetLength == 0 ? "Request line has more than one SP before the target." : "Request line has no HTTP version.");
        }

        ReadOnlySpan<byte> target = rest[..targetLength];
        if (target.IndexOfAnyExceptInRange((byte)0x21, (byte)0x7E) >= 0)
        {
            BadHttpRequestException.Throw("Request target contains a control, space or non-ASCII byte.");
        }

        ReadOnlySpan<byte> versionText = rest[(targetLength + 1)..];
        KnownVersion version = versionText.Length == 8 ? KnownVersions.Match(versionText) : KnownVersion.None;
        if (version == KnownVersion.None)
        {
            if (RequestTargets.IsHttpVersionSyntax(versionText))
            {
                BadHttpRequestException.Throw("HTTP version not supported.", 505);
            }

            BadHttpRequestException.Throw("Invalid HTTP version.");
        }

        RequestTargetForm form = RequestTargets.Classify(method, target, out int queryIndex);
        handler.OnRequestLine(method, content[..methodLength], target, form, queryIndex, version);
    }
}
