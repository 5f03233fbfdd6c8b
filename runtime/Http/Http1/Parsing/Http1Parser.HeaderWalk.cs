using System;
using System.Buffers;
using System.Diagnostics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

public static partial class Http1Parser
{
    // "\r\n" as MatcherReads.Read16 reads it (the first byte lowest).
    private const ushort CarriageReturnLineFeed = 0x0A0D;

    /// <summary>
    /// Parses the complete header lines at the start of <paramref name="span"/>, up to and including the empty line; true
    /// once the section is complete. <paramref name="consumed"/> follows every line handed on, and stops before a line that
    /// does not end inside the span.
    /// </summary>
    /// <remarks>
    /// The span is read as a stream of line events: each 64-byte chunk is classified at once into a mask of the bytes that
    /// cannot appear in a field value (<see cref="HttpByteMasks.FieldLine"/>), and the set bits are taken in order
    /// (lowest bit, then clear it). In a valid section those bytes are exactly the CR and LF of each line, so the walk
    /// from one line to the next is a few bit operations, and the chunks are classified independently of where lines
    /// end; inside a long value, chunks without a control byte are passed two at a time. A line's name must be a token
    /// directly followed by ':': its end is read from the same chunk's token mask when the line lies in that chunk, else
    /// from a mask loaded at the line start. A line that is anything else (an error, an unfinished line, a limit) goes
    /// through <see cref="ParseHeaderLine"/>, the line-by-line parse that names the exact error, so the answer is that of
    /// the line-by-line parser for every input. A span shorter than a chunk is copied into one first.
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
}
