using System;
using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

/// <summary>The allocation-free HTTP/1.1 request parser (RFC 9112): request line and header section, generic over struct handlers.</summary>
/// <remarks>
/// Each method works on a <see cref="SequenceReader{T}"/> over whatever has been received so far. A complete line
/// inside one segment is parsed in place; a line that crosses segments is first copied to a stack (or pooled)
/// buffer. Nothing is consumed from a line until all of it is present, so a caller retries with more data.
/// </remarks>
public static partial class Http1Parser
{
    // Longest method token accepted, in bytes: the one definition the generator shares (see HttpTokenChars).
    internal const int MaxMethodLength = HttpTokenChars.MaxMethodLength;

    // Lines that cross segments and fit here are copied to the stack; longer ones to a pooled array.
    private const int StackCopySize = 512;

    /// <summary>Parses the request line; true when it was parsed, handed to the handler and consumed, false when more data is needed.</summary>
    /// <remarks>
    /// Empty lines (CRLF) before the request line are skipped and consumed with it; they count toward
    /// <see cref="HttpLimits.MaxRequestLineSize"/>. An incomplete line whose start can never become a valid request
    /// line is rejected at once, without waiting for its LF or the limit.
    /// </remarks>
    /// <exception cref="BadHttpRequestException">400 malformed, 414 longer than the limit (also while incomplete), 501 method
    /// longer than 32 bytes, 505 unsupported version.</exception>
    public static bool TryParseRequestLine<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits)
        where T : struct, IHttpRequestLineHandler
        => TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore: 0);

    /// <summary>Like the public overload, after <paramref name="emptyLinesBefore"/> bytes of empty lines that a connection already consumed.</summary>
    /// <remarks>Those count toward the limit as if they were still in the input, so the answer does not depend on how the bytes arrived.</remarks>
    internal static bool TryParseRequestLine<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore)
        where T : struct, IHttpRequestLineHandler
        => TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore, useMasks: true);

    /// <summary>
    /// <see cref="TryParseRequestLine{T}(ref T, ref SequenceReader{byte}, HttpLimits)"/> without the mask path, with a scan per
    /// delimiter: the parse the mask path settles lines for, kept as its reference. Tests require both to give the same
    /// answer for every input.
    /// </summary>
    internal static bool TryParseRequestLineByScans<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore)
        where T : struct, IHttpRequestLineHandler
        => TryParseRequestLine(ref handler, ref reader, limits, emptyLinesBefore, useMasks: false);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool TryParseRequestLine<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits, int emptyLinesBefore, bool useMasks)
        where T : struct, IHttpRequestLineHandler
    {
        int max = limits.MaxRequestLineSize - emptyLinesBefore;
        ReadOnlySpan<byte> span = reader.UnreadSpan;
        if (useMasks)
        {
            int parsed = span.Length >= HttpByteMasks.Width
                ? ParseOriginFormLine(ref handler, span, ref MemoryMarshal.GetReference(span), max)
                : ParseShortOriginFormLine(ref handler, span, max);
            if (parsed > 0)
            {
                reader.Advance(parsed);
                return true;
            }
        }

        int lineFeed = span.IndexOf((byte)'\n');
        if (lineFeed < 0 || span[0] == (byte)'\r')
        {
            return TryParseRequestLineSlow(ref handler, ref reader, max, useMasks);
        }

        int length = lineFeed + 1;
        if (length > max)
        {
            ThrowRequestLineTooLong(span[..max]);
        }

        ParseRequestLine(ref handler, span[..length]);
        reader.Advance(length);
        return true;
    }

    /// <summary>The request line after empty lines, across segments, or not complete yet.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit]
    private static bool TryParseRequestLineSlow<T>(ref T handler, ref SequenceReader<byte> reader, int max, bool useMasks)
        where T : struct, IHttpRequestLineHandler
    {
        SequenceReader<byte> line = reader;
        if (!TrySkipEmptyLines(ref line, max, out int skipped))
        {
            return false;
        }

        // The empty lines count toward the limit, so a client cannot hold the connection open with them alone.
        int allowed = max - skipped;
        if (!TryFindLine(ref line, allowed, out int length))
        {
            ReadOnlySequence<byte> received = line.UnreadSequence;
            if (received.Length >= allowed)
            {
                ThrowRequestLineTooLong(received.Slice(0, allowed));
            }

            CheckRequestLineStart(received);
            return false;
        }

        // The copy sits in a buffer of at least a chunk and ends with its LF, so the mask path can read it too.
        Span<byte> copy = CopyUnread(line, length, stackalloc byte[StackCopySize], out byte[]? rented);
        try
        {
            if (!useMasks || ParseOriginFormLine(ref handler, copy, ref MemoryMarshal.GetReference(copy), allowed) == 0)
            {
                ParseRequestLine(ref handler, copy);
            }
        }
        finally
        {
            ReturnCopy(rented);
        }

        reader.Advance(skipped + length);
        return true;
    }

    /// <summary>414, unless the bytes within the limit already hold an error: that one is found first however the bytes arrive.</summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowRequestLineTooLong(ReadOnlySequence<byte> withinLimit)
    {
        CheckRequestLineStart(withinLimit);
        BadHttpRequestException.Throw(RequestRejectionReason.RequestLineTooLong);
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowRequestLineTooLong(ReadOnlySpan<byte> withinLimit)
    {
        default(RequestLineStartCheck).Scan(withinLimit);
        BadHttpRequestException.Throw(RequestRejectionReason.RequestLineTooLong);
    }

    /// <summary>
    /// True when <paramref name="input"/> is nothing but complete empty lines (CRLF pairs), as a client may send after
    /// a body; <paramref name="length"/> is their byte count. A connection may consume them to count as idle again.
    /// </summary>
    /// <exception cref="BadHttpRequestException">400 for a bare CR, or for empty lines that reach the request-line limit together with
    /// the <paramref name="emptyLinesBefore"/> bytes of them consumed earlier.</exception>
    internal static bool IsOnlyEmptyLines(ReadOnlySequence<byte> input, HttpLimits limits, int emptyLinesBefore, out int length)
    {
        var reader = new SequenceReader<byte>(input);
        bool lineStarts = TrySkipEmptyLines(ref reader, limits.MaxRequestLineSize - emptyLinesBefore, out length);
        return !lineStarts && length > 0 && length == input.Length;
    }

    /// <summary>
    /// Steps over the empty lines (CRLF pairs) before a request line: RFC 9112 section 2.2 says a server SHOULD
    /// ignore at least one, and a client may send one after a body. False when the input ends before the line starts.
    /// </summary>
    private static bool TrySkipEmptyLines(ref SequenceReader<byte> reader, int max, out int skipped)
    {
        skipped = 0;
        while (reader.TryPeek(out byte first) && first == (byte)'\r')
        {
            if (!reader.TryPeek(1, out byte second))
            {
                return false;
            }

            if (second != (byte)'\n')
            {
                BadHttpRequestException.Throw(RequestRejectionReason.BareCarriageReturnBeforeRequestLine);
            }

            reader.Advance(2);
            skipped += 2;
            if (skipped >= max)
            {
                BadHttpRequestException.Throw(RequestRejectionReason.TooManyEmptyLines);
            }
        }

        return !reader.End;
    }

    /// <summary>
    /// Throws when the start of a request line received so far (no LF yet) can never become a valid one, so that a
    /// client speaking another protocol (a TLS ClientHello, say) is answered at once instead of at the line limit.
    /// Checks only what decides the outcome whatever follows: token bytes then SP, VCHARs then SP, "HTTP/" DIGIT "." DIGIT CR.
    /// </summary>
    private static void CheckRequestLineStart(ReadOnlySequence<byte> received)
    {
        var check = default(RequestLineStartCheck);
        foreach (ReadOnlyMemory<byte> memory in received)
        {
            check.Scan(memory.Span);
        }
    }

    /// <summary>Finds the next LF within the first <paramref name="max"/> unread bytes; length counts the LF.</summary>
    /// <remarks>Segment by segment with a vector search each, without slicing the sequence.</remarks>
    private static bool TryFindLine(ref SequenceReader<byte> reader, int max, out int length)
    {
        ReadOnlySequence<byte> sequence = reader.Sequence;
        SequencePosition position = reader.Position;
        length = 0;
        while (length < max && sequence.TryGet(ref position, out ReadOnlyMemory<byte> memory))
        {
            ReadOnlySpan<byte> piece = memory.Span;
            if (piece.Length > max - length)
            {
                piece = piece[..(max - length)];
            }

            int lineFeed = piece.IndexOf((byte)'\n');
            if (lineFeed >= 0)
            {
                length += lineFeed + 1;
                return true;
            }

            length += piece.Length;
        }

        length = 0;
        return false;
    }

    /// <summary>Copies the next <paramref name="length"/> unread bytes into <paramref name="stackBuffer"/> when they fit, else into a pooled array for <see cref="ReturnCopy"/>.</summary>
    private static Span<byte> CopyUnread(in SequenceReader<byte> reader, int length, Span<byte> stackBuffer, out byte[]? rented)
    {
        rented = null;
        Span<byte> copy = length <= stackBuffer.Length
            ? stackBuffer[..length]
            : (rented = ArrayPool<byte>.Shared.Rent(length)).AsSpan(0, length);
        ReadOnlySequence<byte> sequence = reader.Sequence;
        SequencePosition position = reader.Position;
        int copied = 0;
        while (copied < length && sequence.TryGet(ref position, out ReadOnlyMemory<byte> memory))
        {
            ReadOnlySpan<byte> piece = memory.Span;
            int take = Math.Min(piece.Length, length - copied);
            piece[..take].CopyTo(copy[copied..]);
            copied += take;
        }

        return copy;
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
            ThrowInvalidLine(line, RequestRejectionReason.RequestLineBareLineFeed);
        }

        ReadOnlySpan<byte> content = line[..contentLength];
        KnownMethod method = KnownMethods.Match(content, out int methodLength);
        if (method == KnownMethod.None || methodLength > MaxMethodLength)
        {
            ThrowInvalidLine(line, RequestRejectionReason.InvalidMethod);
        }

        // Match guarantees content[methodLength] is the single SP after the token.
        ReadOnlySpan<byte> rest = content[(methodLength + 1)..];
        int targetLength = rest.IndexOf((byte)' ');
        if (targetLength <= 0)
        {
            ThrowInvalidLine(line, targetLength == 0 ? RequestRejectionReason.ExtraSpaceBeforeTarget : RequestRejectionReason.MissingVersion);
        }

        ReadOnlySpan<byte> target = rest[..targetLength];
        if (target.IndexOfAnyExceptInRange((byte)0x21, (byte)0x7E) >= 0)
        {
            ThrowInvalidLine(line, RequestRejectionReason.InvalidTargetCharacter);
        }

        ReadOnlySpan<byte> versionText = rest[(targetLength + 1)..];
        KnownVersion version = versionText.Length == 8 ? KnownVersions.Match(versionText) : KnownVersion.None;
        if (version == KnownVersion.None)
        {
            if (!RequestTargets.IsHttpVersionSyntax(versionText))
            {
                ThrowInvalidLine(line, RequestRejectionReason.InvalidVersion);
            }

            if (versionText[5] != (byte)'1')
            {
                BadHttpRequestException.Throw(RequestRejectionReason.UnsupportedVersion);
            }

            // RFC 9110 section 2.5: a higher minor version of HTTP/1 is processed as the highest one supported.
            version = KnownVersion.Http11;
        }

        RequestTargetForm form = RequestTargets.Classify(method, target, out int queryIndex);
        handler.OnRequestLine(method, content[..methodLength], target, form, queryIndex, version);
    }

    /// <summary>
    /// Throws the error of a complete line: the first one in byte order, as found while the line was incomplete, when
    /// the line holds one (a method too long, a bad byte), else <paramref name="reason"/>. So a line answers the same
    /// whether it arrived at once or in pieces.
    /// </summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowInvalidLine(ReadOnlySpan<byte> line, RequestRejectionReason reason)
    {
        default(RequestLineStartCheck).Scan(line[..^1]);
        BadHttpRequestException.Throw(reason);
    }
}
