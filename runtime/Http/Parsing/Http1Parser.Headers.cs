using System;
using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Runtime.InteropServices;
using System.Runtime.CompilerServices;
using Falconet.Text;

namespace Falconet.Http;

public static partial class Http1Parser
{
    // "\r\n" as MatcherReads.Read16 reads it (the first byte lowest).
    private const ushort CarriageReturnLineFeed = 0x0A0D;

    /// <summary>Parses header lines up to and including the empty line; true when the whole section was consumed.</summary>
    /// <remarks>
    /// On false, every complete line has been handed to the handler and consumed, and <paramref name="state"/>
    /// holds the count and size so far: call again with the same state once more data arrived.
    /// </remarks>
    /// <exception cref="BadHttpRequestException">431 over the count or size limit; 400 for obs-fold, whitespace before the
    /// colon, bare CR or LF, a non-token name, an invalid value byte, or a value the handler refused.</exception>
    public static bool TryParseHeaders<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state)
        where T : struct, IHttpHeadersHandler
    {
        while (!reader.End)
        {
            ReadOnlySpan<byte> span = reader.UnreadSpan;
            int consumed = 0;
            bool sectionComplete;
            try
            {
                sectionComplete = ParseHeaderLines(ref handler, span, limits, ref state, ref consumed);
            }
            finally
            {
                // Also when a line is refused: the lines before it were handed to the handler and are consumed.
                reader.Advance(consumed);
            }

            if (sectionComplete)
            {
                return true;
            }

            if (consumed < span.Length)
            {
                // The line at span[consumed] does not end inside this segment.
                if (!TryParseHeaderLinesAcrossSegments(ref handler, ref reader, limits, ref state, out sectionComplete))
                {
                    return false;
                }

                if (sectionComplete)
                {
                    return true;
                }
            }
        }

        return false;
    }

    /// <summary>
    /// <see cref="TryParseHeaders"/> one line at a time with a scan per delimiter: the parse the line-event walk replaced,
    /// kept as its reference. Tests require both to give the same answer for every input; the benchmarks measure both.
    /// </summary>
    internal static bool TryParseHeadersLineByLine<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits, ref HeaderParseState state)
        where T : struct, IHttpHeadersHandler
    {
        while (!reader.End)
        {
            int consumed = ParseHeaderLine(ref handler, reader.UnreadSpan, limits, ref state, out bool sectionComplete);
            if (consumed == 0)
            {
                consumed = ParseHeaderLineAcrossSegments(ref handler, ref reader, limits, ref state, out sectionComplete);
                if (consumed == 0)
                {
                    return false;
                }
            }

            reader.Advance(consumed);
            if (sectionComplete)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Parses the complete header lines at the start of <paramref name="span"/>, up to and including the empty line; true
    /// once the section is complete. <paramref name="consumed"/> follows every line handed on, and stops before a line that
    /// does not end inside the span.
    /// </summary>
    /// <remarks>
    /// The span is read as a stream of line events: each 64-byte chunk is classified at once into a mask of the bytes that
    /// cannot appear in a field value (<see cref="HttpByteMasks.NonFieldValue"/>), and the set bits are taken in order
    /// (lowest bit, then clear it). In a valid section those bytes are exactly the CR and LF of each line, so the walk
    /// from one line to the next is a few bit operations, and the chunks are classified independently of where lines
    /// end. Each line's name is checked with one more mask at the line start (<see cref="HttpByteMasks.NonToken"/>):
    /// it must be a token directly followed by ':'. A line that is anything else (an error, an unfinished line, a limit)
    /// goes through <see cref="ParseHeaderLine"/>, the line-by-line parse that names the exact error, so the answer is
    /// that of the line-by-line parser for every input. A span shorter than a chunk is copied into one first.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool ParseHeaderLines<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits, ref HeaderParseState state,
        ref int consumed)
        where T : struct, IHttpHeadersHandler
        => span.Length >= HttpByteMasks.Width
            ? ParseHeaderLines(ref handler, span, ref MemoryMarshal.GetReference(span), limits, ref state, ref consumed)
            : ParseShortHeaderLines(ref handler, span, limits, ref state, ref consumed);

    /// <summary><see cref="ParseHeaderLines{T}(ref T, ReadOnlySpan{byte}, HttpLimits, ref HeaderParseState, ref int)"/> for a span shorter than a chunk: on a copy that is a whole chunk.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit]
    private static bool ParseShortHeaderLines<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits, ref HeaderParseState state,
        ref int consumed)
        where T : struct, IHttpHeadersHandler
    {
        Span<byte> copy = stackalloc byte[HttpByteMasks.Width];
        span.CopyTo(copy);
        return ParseHeaderLines(ref handler, span, ref MemoryMarshal.GetReference(copy), limits, ref state, ref consumed);
    }

    /// <summary>The walk over <paramref name="data"/>: the span's bytes, readable for at least one chunk (64 bytes).</summary>
    /// <remarks>Not inlined: compiled once per handler with a budget of its own, so the handler's calls inline into the loop.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool ParseHeaderLines<T>(ref T handler, ReadOnlySpan<byte> span, ref byte data, HttpLimits limits,
        ref HeaderParseState state, ref int consumed)
        where T : struct, IHttpHeadersHandler
    {
        int length = span.Length;

        // Masks are loaded from at most here, so all 64 bytes are readable; bits at or past `end` (the span, or the section's
        // size limit) are cleared, so bytes past the limit never decide anything.
        int lastLoad = Math.Max(length, HttpByteMasks.Width) - HttpByteMasks.Width;
        int end = Math.Min(length, limits.MaxRequestHeadersSize - state.Bytes);
        int maxCount = limits.MaxRequestHeaderCount;
        int bytesBefore = state.Bytes;
        int count = state.Count;
        int lineStart = 0;
        int chunk = 0;
        ulong events = LineEvents(ref data, chunk, lastLoad, end, out ulong chunkNonToken);
        while (true)
        {
            while (events == 0)
            {
                chunk += HttpByteMasks.Width;

                // Inside a long value (a cookie, a token): pass over chunks with no byte that could end it, two at a time.
                while (chunk + (2 * HttpByteMasks.Width) <= end && !HttpByteMasks.MayEndFieldValue(ref Unsafe.Add(ref data, chunk)))
                {
                    chunk += 2 * HttpByteMasks.Width;
                }

                if (chunk >= end)
                {
                    // No line end after lineStart: the caller continues with the next segment or more data.
                    state.Count = count;
                    state.Bytes = bytesBefore + lineStart;
                    return false;
                }

                // The previous line's LF may have been the first byte of this chunk (a line that started in an earlier
                // chunk and is still open has nothing to skip).
                events = LineEvents(ref data, chunk, lastLoad, end, out chunkNonToken) & (ulong.MaxValue << Math.Max(lineStart - chunk, 0));
            }

            int carriageReturn = chunk + BitOperations.TrailingZeroCount(events);
            events &= events - 1;
            if (carriageReturn + 1 >= end || MatcherReads.Read16(ref data, carriageReturn) != CarriageReturnLineFeed)
            {
                goto LineByLine;
            }

            if (carriageReturn == lineStart)
            {
                state.Count = count;
                state.Bytes = bytesBefore + lineStart + 2;
                handler.OnHeadersComplete();
                consumed = lineStart + 2;
                return true;
            }

            // The LF's own event; when it is the first byte of the next chunk, the mask shift above skips it.
            events &= events - 1;

            // The name ends at the first byte that is not a tchar: read from the chunk's own mask when the line lies in it, else
            // from a mask loaded at the line start.
            ulong nameEnds;
            if (lineStart >= chunk)
            {
                nameEnds = chunkNonToken >> (lineStart - chunk);
            }
            else
            {
                int load = Math.Min(lineStart, lastLoad);
                nameEnds = HttpByteMasks.NonToken(ref Unsafe.Add(ref data, load)) >> (lineStart - load);
            }

            int nameLength = BitOperations.TrailingZeroCount(nameEnds);
            if (nameLength == 0 || lineStart + nameLength >= carriageReturn
                || Unsafe.Add(ref data, lineStart + nameLength) != (byte)':' || count >= maxCount)
            {
                goto LineByLine;
            }

            // OWS around the value: usually one SP after the colon. Between the colon and the CR the only bytes at or below
            // 0x20 are SP and HTAB (the CR is the first byte that is not a value byte), so one compare tells either.
            int valueStart = lineStart + nameLength + 1;
            int valueEnd = carriageReturn;
            if (Unsafe.Add(ref data, valueStart) == (byte)' ')
            {
                valueStart++;
            }

            if (Unsafe.Add(ref data, valueStart) <= (byte)' ' || Unsafe.Add(ref data, valueEnd - 1) <= (byte)' ')
            {
                TrimWhitespace(ref data, ref valueStart, ref valueEnd);
            }

            if (!handler.OnHeader(
                MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref data, lineStart), nameLength),
                MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref data, valueStart), valueEnd - valueStart)))
            {
                state.Count = count;
                state.Bytes = bytesBefore + lineStart;
                BadHttpRequestException.Throw(RequestRejectionReason.InvalidHeaderValue);
            }

            count++;
            lineStart = carriageReturn + 2;
            consumed = lineStart;
            continue;

        LineByLine:
            state.Count = count;
            state.Bytes = bytesBefore + lineStart;
            int lineLength = ParseHeaderLine(ref handler, span[lineStart..], limits, ref state, out bool sectionComplete);
            if (lineLength == 0)
            {
                return false;
            }

            lineStart += lineLength;
            consumed = lineStart;
            if (sectionComplete)
            {
                return true;
            }

            // Only reached if the line-by-line parse accepts a line the walk did not: continue after it.
            count = state.Count;
            chunk = lineStart & -HttpByteMasks.Width;
            events = LineEvents(ref data, chunk, lastLoad, end, out chunkNonToken) & (ulong.MaxValue << (lineStart - chunk));
        }
    }

    /// <summary>Moves <paramref name="start"/> and <paramref name="end"/> inward past SP and HTAB.</summary>
    private static void TrimWhitespace(ref byte data, ref int start, ref int end)
    {
        while (start < end && HttpCharacters.IsWhitespace(Unsafe.Add(ref data, start)))
        {
            start++;
        }

        while (end > start && HttpCharacters.IsWhitespace(Unsafe.Add(ref data, end - 1)))
        {
            end--;
        }
    }

    /// <summary>
    /// The line events of the chunk at <paramref name="chunk"/>: its bytes that cannot be in a field value, before
    /// <paramref name="end"/>; <paramref name="nonToken"/> marks its bytes that are not tchar (past the data: unspecified).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong LineEvents(ref byte data, int chunk, int lastLoad, int end, out ulong nonToken)
    {
        int load = Math.Min(chunk, lastLoad);
        ulong events = HttpByteMasks.FieldLine(ref Unsafe.Add(ref data, load), out nonToken) >> (chunk - load);
        nonToken >>= chunk - load;
        int valid = end - chunk;
        if (valid >= HttpByteMasks.Width)
        {
            return events;
        }

        return valid > 0 ? events & ((1UL << valid) - 1) : 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit]
    private static int ParseHeaderLineAcrossSegments<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits,
        ref HeaderParseState state, out bool sectionComplete)
        where T : struct, IHttpHeadersHandler
    {
        sectionComplete = false;
        int allowed = limits.MaxRequestHeadersSize - state.Bytes;
        if (!TryFindLine(ref reader, allowed, out int length))
        {
            // The bytes received so far, within the limit, may already be an error (a CR followed by anything but LF, a bad
            // name or value byte); it is found here as it would be in one segment. A byte past the limit never decides.
            long window = Math.Min(reader.Remaining, allowed);
            if (window > 0)
            {
                CheckHeaderLineStart(ref handler, reader.UnreadSequence.Slice(0, window), limits, ref state);
            }

            if (reader.Remaining >= allowed)
            {
                BadHttpRequestException.Throw(RequestRejectionReason.HeadersTooLarge);
            }

            return 0;
        }

        Span<byte> line = CopyUnread(reader, length, stackalloc byte[StackCopySize], out byte[]? rented);
        try
        {
            int consumed = ParseHeaderLine(ref handler, line, limits, ref state, out sectionComplete);
            Debug.Assert(consumed == length, "A line that ends in LF is either parsed whole or rejected.");
            return consumed;
        }
        finally
        {
            ReturnCopy(rented);
        }
    }

    /// <summary>
    /// The walk for a line that crosses segments: the line is copied, with as much of what follows as fits the stack
    /// buffer, and the walk goes on over the copy, so the lines after it need no call of their own (a line the copy cuts
    /// short is left, whole, to the next call). False when no line ends within the received bytes and the limit, after
    /// <see cref="ParseHeaderLineAcrossSegments"/> decided that case; otherwise the lines handed on are consumed from
    /// <paramref name="reader"/>, also when a later one is refused.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit]
    private static bool TryParseHeaderLinesAcrossSegments<T>(ref T handler, ref SequenceReader<byte> reader, HttpLimits limits,
        ref HeaderParseState state, out bool sectionComplete)
        where T : struct, IHttpHeadersHandler
    {
        if (!TryFindLine(ref reader, limits.MaxRequestHeadersSize - state.Bytes, out int length))
        {
            int unfinished = ParseHeaderLineAcrossSegments(ref handler, ref reader, limits, ref state, out sectionComplete);
            Debug.Assert(unfinished == 0, "No line ends within the limit.");
            return false;
        }

        // The buffer (or pooled array) holds at least a chunk, so the walk reads whole chunks of it.
        int copyLength = (int)Math.Max(length, Math.Min(reader.Remaining, StackCopySize));
        Span<byte> copy = CopyUnread(reader, copyLength, stackalloc byte[StackCopySize], out byte[]? rented);
        int consumed = 0;
        try
        {
            sectionComplete = ParseHeaderLines(ref handler, copy, ref MemoryMarshal.GetReference(copy), limits, ref state, ref consumed);
            Debug.Assert(consumed >= length, "A line that ends in LF is either parsed whole or rejected.");
            return true;
        }
        finally
        {
            reader.Advance(consumed);
            ReturnCopy(rented);
        }
    }

    /// <summary>Throws the error an unfinished header line already holds; the line crosses segments, so it is copied first.</summary>
    [SkipLocalsInit]
    private static void CheckHeaderLineStart<T>(ref T handler, ReadOnlySequence<byte> received, HttpLimits limits, ref HeaderParseState state)
        where T : struct, IHttpHeadersHandler
    {
        Span<byte> copy = Copy(received, stackalloc byte[StackCopySize], out byte[]? rented);
        try
        {
            // Without a LF the line is never complete, so this only validates and never reaches the handler.
            int consumed = ParseHeaderLine(ref handler, copy, limits, ref state, out _);
            Debug.Assert(consumed == 0, "A line without LF is never parsed.");
        }
        finally
        {
            ReturnCopy(rented);
        }
    }

    /// <summary>Parses the header line at the start of <paramref name="span"/>; returns its length, or 0 when the span ends first.</summary>
    /// <remarks>Bytes past the section's size limit are never looked at, so a line that does not fit answers 431 whatever they hold.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ParseHeaderLine<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits,
        ref HeaderParseState state, out bool sectionComplete)
        where T : struct, IHttpHeadersHandler
    {
        sectionComplete = false;
        int allowed = limits.MaxRequestHeadersSize - state.Bytes;
        if (span.Length > allowed)
        {
            span = span[..allowed];
            if (span.IsEmpty)
            {
                return 0;
            }
        }

        if (span[0] == (byte)'\r')
        {
            if (span.Length < 2)
            {
                return 0;
            }

            if (span[1] != (byte)'\n')
            {
                BadHttpRequestException.Throw(RequestRejectionReason.HeaderBareCarriageReturn);
            }

            state.Bytes += 2;
            sectionComplete = true;
            handler.OnHeadersComplete();
            return 2;
        }

        // One scan finds the colon and proves every byte before it is a tchar.
        int nameLength = HttpScanner.IndexOfNonToken(span);
        if (nameLength < 0)
        {
            return 0;
        }

        if (span[nameLength] != (byte)':' || nameLength == 0)
        {
            ThrowInvalidName(span, nameLength);
        }

        // One scan finds the line end and proves every value byte before it is VCHAR, obs-text, SP or HTAB.
        int valueStart = nameLength + 1;
        int valueLength = HttpScanner.IndexOfFieldValueEnd(span[valueStart..]);
        if (valueLength < 0)
        {
            return 0;
        }

        int carriageReturn = valueStart + valueLength;
        if (span[carriageReturn] != (byte)'\r')
        {
            BadHttpRequestException.Throw(span[carriageReturn] == (byte)'\n'
                ? RequestRejectionReason.HeaderBareLineFeed
                : RequestRejectionReason.InvalidHeaderValueCharacter);
        }

        if (carriageReturn + 1 == span.Length)
        {
            return 0;
        }

        if (span[carriageReturn + 1] != (byte)'\n')
        {
            BadHttpRequestException.Throw(RequestRejectionReason.HeaderBareCarriageReturn);
        }

        int lineLength = carriageReturn + 2;
        if (state.Count >= limits.MaxRequestHeaderCount)
        {
            BadHttpRequestException.Throw(RequestRejectionReason.TooManyHeaders);
        }

        ReadOnlySpan<byte> value = HttpCharacters.TrimWhitespace(span[valueStart..carriageReturn]);
        if (!handler.OnHeader(span[..nameLength], value))
        {
            BadHttpRequestException.Throw(RequestRejectionReason.InvalidHeaderValue);
        }

        state.Count++;
        state.Bytes += lineLength;
        return lineLength;
    }

    [DoesNotReturn]
    private static void ThrowInvalidName(ReadOnlySpan<byte> span, int nameLength)
    {
        byte found = span[nameLength];
        if (nameLength == 0)
        {
            BadHttpRequestException.Throw(found switch
            {
                (byte)' ' or (byte)'\t' => RequestRejectionReason.ObsFold,
                (byte)'\n' => RequestRejectionReason.HeaderBareLineFeed,
                (byte)':' => RequestRejectionReason.EmptyHeaderName,
                _ => RequestRejectionReason.InvalidHeaderNameCharacter,
            });
        }

        BadHttpRequestException.Throw(found switch
        {
            (byte)' ' or (byte)'\t' => RequestRejectionReason.WhitespaceBeforeColon,
            (byte)'\r' or (byte)'\n' => RequestRejectionReason.HeaderLineWithoutColon,
            _ => RequestRejectionReason.InvalidHeaderNameCharacter,
        });
    }
}
