using System;
using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

public static partial class Http1Parser
{
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
            bool sectionComplete;
            if (span.Length < StackCopySize && span.Length < reader.Remaining)
            {
                // A short rest of a segment with more behind it: one walk over a copy of both instead of one walk each.
                if (!TryParseHeaderLinesAcrossSegments(ref handler, ref reader, limits, ref state, out sectionComplete))
                {
                    return false;
                }

                if (sectionComplete)
                {
                    return true;
                }

                continue;
            }

            int consumed = 0;
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
