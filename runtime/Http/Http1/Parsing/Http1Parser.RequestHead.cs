using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

public static partial class Http1Parser
{
    /// <summary>
    /// A whole request head, request line and header section, that lies in <paramref name="span"/>: true with its length in
    /// <paramref name="consumed"/> once every part was handed to the handler. False when the head does not end inside the
    /// span or its request line is not the common one (what the 64-byte masks settle); the handler may then have been given
    /// the request line and some header lines, and the caller parses the head again from its start with
    /// <see cref="TryParseRequestLine{T}(ref T, ref System.Buffers.SequenceReader{byte}, HttpLimits)"/> and
    /// <see cref="TryParseHeaders"/>, which hand on the same parts and decide every other case.
    /// </summary>
    /// <remarks>
    /// The connection's fast path for a head received in one piece: one call instead of two, no <see cref="System.Buffers.SequenceReader{T}"/>.
    /// It parses with the same code as the two calls on a sequence of one segment, so a head it refuses is refused for the same
    /// reason.
    /// </remarks>
    /// <exception cref="BadHttpRequestException">As <see cref="TryParseHeaders"/>, for a header section that starts after a common request line.</exception>
    internal static bool TryParseRequestHead<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits, out int consumed)
        where T : struct, IHttpRequestLineHandler, IHttpHeadersHandler
    {
        consumed = 0;
        int line = ParseCommonRequestLine(ref handler, span, limits);
        if (line == 0)
        {
            return false;
        }

        var state = default(HeaderParseState);
        int headers = 0;
        if (!ParseHeaderLines(ref handler, span[line..], limits, ref state, ref headers))
        {
            return false;
        }

        consumed = line + headers;
        return true;
    }

    /// <summary>
    /// <see cref="TryParseRequestHead{T}"/> for a handler that keeps the request line and the header section it parsed last:
    /// a line that repeats the kept one byte for byte is taken whole
    /// (<see cref="IRepeatedRequestLineHandler.TryRepeatRequestLine"/>), and so is a section
    /// (<see cref="IRepeatedHeaderSectionHandler.TryRepeatHeaderSection"/>, then <see cref="IHttpHeadersHandler.OnHeadersComplete"/>);
    /// any other line or section is parsed, then handed to the handler to keep. A head whose line and section both repeated is
    /// kept as one run too, so that the next repeat of it is found with one compare
    /// (<see cref="IRepeatedRequestLineHandler.TryRepeatRequestHead"/>).
    /// </summary>
    /// <remarks>
    /// Equal bytes parse to equal parts under the same limits, so the answer is the parse's for every input: only a common
    /// request line (one this method parses itself) is ever kept, so a repeat of it is one too. A head whose line and section
    /// both repeat is the previous request's head again (a kept line is always the previous request's, see
    /// <see cref="IRepeatedRequestLineHandler"/>, and that request's section was the kept one, repeated or just kept), which
    /// <see cref="IHttpHeadersHandler.OnHeadersComplete"/> already accepted: it is not called again for the same answer.
    /// </remarks>
    internal static bool TryParseRepeatableRequestHead<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits, out int consumed)
        where T : struct, IHttpRequestLineHandler, IHttpHeadersHandler, IRepeatedRequestLineHandler, IRepeatedHeaderSectionHandler
    {
        int head = handler.TryRepeatRequestHead(span);
        if (head != 0)
        {
            consumed = head;
            return true;
        }

        consumed = 0;
        int line = handler.TryRepeatRequestLine(span);
        bool lineRepeated = line != 0;
        if (!lineRepeated)
        {
            line = ParseCommonRequestLine(ref handler, span, limits);
            if (line == 0)
            {
                return false;
            }

            handler.RememberRequestLine(span[..line]);
        }

        ReadOnlySpan<byte> section = span[line..];
        int repeated = handler.TryRepeatHeaderSection(section);
        if (repeated != 0)
        {
            if (!lineRepeated)
            {
                handler.OnHeadersComplete();
            }
            else
            {
                // Both repeated: from the next request on one compare covers the whole head.
                handler.RememberRequestHead(span[..(line + repeated)]);
            }

            consumed = line + repeated;
            return true;
        }

        var state = default(HeaderParseState);
        int headers = 0;
        if (!ParseHeaderLines(ref handler, section, limits, ref state, ref headers))
        {
            return false;
        }

        handler.RememberHeaderSection(section[..headers]);
        consumed = line + headers;
        return true;
    }

    /// <summary>The length of the common request line at the start of <paramref name="span"/>, or 0 (see <see cref="TryParseRequestHead{T}"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ParseCommonRequestLine<T>(ref T handler, ReadOnlySpan<byte> span, HttpLimits limits)
        where T : struct, IHttpRequestLineHandler
        => span.Length < HttpByteMasks.Width ? 0 : ParseOriginFormLine(ref handler, span, ref MemoryMarshal.GetReference(span), limits.MaxRequestLineSize);
}
