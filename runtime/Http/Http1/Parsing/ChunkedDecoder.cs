using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

/// <summary>Incremental decoder of the chunked transfer coding (RFC 9112 section 7.1): copies body bytes out of the input.</summary>
/// <remarks>
/// A state machine that can stop after any byte, so input may arrive one byte at a time or split anywhere
/// across segments. Chunk-size lines and the CRLF after each chunk are checked strictly; chunk extensions
/// are validated (RFC 9112 section 7.1.1) and bounded but ignored; trailer fields are parsed like header fields, a
/// field that must not be a trailer is refused, and the rest are discarded or handed to a handler through
/// <see cref="Decode{TTrailers}"/>.
/// </remarks>
public struct ChunkedDecoder
{
    // 16 hex digits hold any size below 2^63; more digits (even leading zeros) only serve to make lines long.
    private const int MaxChunkSizeDigits = 16;

    private State _state;
    private long _chunkSize;
    private int _chunkSizeDigits;
    private int _extensionLength;
    private long _chunkRemaining;
    private long _totalSize;
    private HeaderParseState _trailers;

    private enum State : byte
    {
        ChunkSizeStart,
        ChunkSize,

        // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), RFC 9112 section 7.1.1.
        ExtensionWhitespace,
        ExtensionNameStart,
        ExtensionName,
        ExtensionAfterName,
        ExtensionValueStart,
        ExtensionTokenValue,
        ExtensionQuotedValue,
        ExtensionQuotedPair,
        ExtensionQuotedEnd,
        ExtensionAfterValue,
        ChunkSizeLineFeed,
        Data,
        DataCarriageReturn,
        DataLineFeed,
        Trailers,
        Complete,
    }

    /// <summary>Decoded body bytes so far.</summary>
    public readonly long TotalSize => _totalSize;

    /// <summary>Decodes from <paramref name="input"/> into <paramref name="destination"/>, discarding trailers; returns the bytes written.</summary>
    /// <remarks>Consumes the input it used. Returns 0 with <paramref name="completed"/> false when more input is needed
    /// (given a non-empty destination); never consumes past the end of the trailer section.</remarks>
    /// <exception cref="BadHttpRequestException">400 on a malformed chunk size, extension, CRLF or trailer; 431 on too large
    /// a trailer section; 413 when the body passes <see cref="HttpLimits.MaxRequestBodySize"/>.</exception>
    public int Decode(ref SequenceReader<byte> input, Span<byte> destination, HttpLimits limits, out bool completed)
    {
        var discard = default(DiscardTrailers);
        return Decode(ref discard, ref input, destination, limits, out completed);
    }

    /// <summary>Like <see cref="Decode(ref SequenceReader{byte}, Span{byte}, HttpLimits, out bool)"/>, handing trailer fields to <paramref name="trailers"/>.</summary>
    public int Decode<TTrailers>(ref TTrailers trailers, ref SequenceReader<byte> input, Span<byte> destination,
        HttpLimits limits, out bool completed)
        where TTrailers : struct, IHttpHeadersHandler
    {
        int written = 0;
        while (true)
        {
            switch (_state)
            {
                case State.Data:
                    ReadOnlySpan<byte> available = input.UnreadSpan;
                    int count = (int)Math.Min(Math.Min(available.Length, destination.Length - written), _chunkRemaining);
                    if (count == 0)
                    {
                        completed = false;
                        return written;
                    }

                    available[..count].CopyTo(destination[written..]);
                    input.Advance(count);
                    written += count;
                    _chunkRemaining -= count;
                    if (_chunkRemaining == 0)
                    {
                        _state = State.DataCarriageReturn;
                    }

                    break;

                case State.Trailers:
                    if (!TryParseTrailers(ref trailers, ref input, limits))
                    {
                        completed = false;
                        return written;
                    }

                    _state = State.Complete;
                    break;

                case State.Complete:
                    completed = true;
                    return written;

                default:
                    if (!input.TryRead(out byte next))
                    {
                        completed = false;
                        return written;
                    }

                    Step(next, limits);
                    break;
            }
        }
    }

    /// <summary>Parses trailer fields like header fields, refusing those that must not be trailers; true once the section ended.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryParseTrailers<TTrailers>(ref TTrailers trailers, ref SequenceReader<byte> input, HttpLimits limits)
        where TTrailers : struct, IHttpHeadersHandler
    {
        var guard = new TrailerGuard<TTrailers>(trailers);
        try
        {
            return Http1Parser.TryParseHeaders(ref guard, ref input, limits, ref _trailers);
        }
        finally
        {
            // The handler is a struct: what it recorded travels back to the caller's copy.
            trailers = guard.Inner;
        }
    }

    /// <summary>Starts a new body.</summary>
    public void Reset() => this = default;

    private void Step(byte next, HttpLimits limits)
    {
        switch (_state)
        {
            case State.ChunkSizeStart:
                int first = HttpCharacters.HexValue(next);
                if (first < 0)
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.InvalidChunkSize);
                }

                _chunkSize = first;
                _chunkSizeDigits = 1;
                _extensionLength = 0;
                _state = State.ChunkSize;
                return;

            case State.ChunkSize:
                int digit = HttpCharacters.HexValue(next);
                if (digit >= 0)
                {
                    if (++_chunkSizeDigits > MaxChunkSizeDigits || _chunkSize > (long.MaxValue >> 4))
                    {
                        BadHttpRequestException.Throw(RequestRejectionReason.ChunkSizeOverflow);
                    }

                    _chunkSize = (_chunkSize << 4) | (uint)digit;
                    return;
                }

                EndOfChunkSize(next, limits);
                return;

            case State.ExtensionWhitespace:
            case State.ExtensionNameStart:
            case State.ExtensionName:
            case State.ExtensionAfterName:
            case State.ExtensionValueStart:
            case State.ExtensionTokenValue:
            case State.ExtensionQuotedValue:
            case State.ExtensionQuotedPair:
            case State.ExtensionQuotedEnd:
            case State.ExtensionAfterValue:
                StepExtension(next, limits);
                return;

            case State.ChunkSizeLineFeed:
                if (next != (byte)'\n')
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.ChunkSizeLineBareCarriageReturn);
                }

                StartChunk(limits);
                return;

            case State.DataCarriageReturn:
                if (next != (byte)'\r')
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.ChunkDataWithoutCrlf);
                }

                _state = State.DataLineFeed;
                return;

            case State.DataLineFeed:
                if (next != (byte)'\n')
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.ChunkDataWithoutCrlf);
                }

                _state = State.ChunkSizeStart;
                return;
        }
    }

    private void EndOfChunkSize(byte next, HttpLimits limits)
    {
        switch (next)
        {
            case (byte)'\r':
                _state = State.ChunkSizeLineFeed;
                return;
            case (byte)';':
                _state = State.ExtensionNameStart;
                CountExtensionByte(limits);
                return;
            case (byte)' ' or (byte)'\t':
                // RFC 9112 allows BWS only before the ';' of an extension.
                _state = State.ExtensionWhitespace;
                CountExtensionByte(limits);
                return;
            default:
                BadHttpRequestException.Throw(RequestRejectionReason.InvalidChunkSize);
                return;
        }
    }

    /// <summary>One byte of the chunk extensions, checked against the RFC 9112 grammar; names and values are ignored.</summary>
    private void StepExtension(byte next, HttpLimits limits)
    {
        bool whitespace = HttpCharacters.IsWhitespace(next);
        bool token = HttpCharacters.IsTokenChar(next);
        State following = _state switch
        {
            // BWS before each ";"; whitespace alone before the CRLF is not an extension.
            State.ExtensionWhitespace when whitespace => _state,
            State.ExtensionWhitespace or State.ExtensionAfterName or State.ExtensionAfterValue or State.ExtensionName
                or State.ExtensionTokenValue or State.ExtensionQuotedEnd when next == (byte)';' => State.ExtensionNameStart,

            // A name is a token, after optional BWS.
            State.ExtensionNameStart when whitespace => _state,
            State.ExtensionNameStart when token => State.ExtensionName,
            State.ExtensionName when token => _state,
            State.ExtensionName when whitespace => State.ExtensionAfterName,
            State.ExtensionAfterName when whitespace => _state,
            State.ExtensionName or State.ExtensionAfterName when next == (byte)'=' => State.ExtensionValueStart,

            // A value is a token or a quoted-string, after optional BWS.
            State.ExtensionValueStart when whitespace => _state,
            State.ExtensionValueStart when token => State.ExtensionTokenValue,
            State.ExtensionValueStart when next == (byte)'"' => State.ExtensionQuotedValue,
            State.ExtensionTokenValue when token => _state,
            State.ExtensionQuotedValue when next == (byte)'"' => State.ExtensionQuotedEnd,
            State.ExtensionQuotedValue when next == (byte)'\\' => State.ExtensionQuotedPair,
            State.ExtensionQuotedValue when IsQuotedText(next) => _state,
            State.ExtensionQuotedPair when HttpCharacters.IsFieldValueChar(next) => State.ExtensionQuotedValue,
            State.ExtensionTokenValue or State.ExtensionQuotedEnd or State.ExtensionAfterValue when whitespace => State.ExtensionAfterValue,

            // The line ends right after a name or a value, never after BWS.
            State.ExtensionName or State.ExtensionTokenValue or State.ExtensionQuotedEnd when next == (byte)'\r' => State.ChunkSizeLineFeed,
            _ => State.ChunkSizeStart,
        };

        // ChunkSizeStart never follows an extension byte: here it means no valid continuation.
        if (following == State.ChunkSizeStart)
        {
            BadHttpRequestException.Throw(RequestRejectionReason.InvalidChunkExtension);
        }

        _state = following;
        if (following != State.ChunkSizeLineFeed)
        {
            CountExtensionByte(limits);
        }
    }

    /// <summary>qdtext (RFC 9110 section 5.6.4): HTAB, SP, VCHAR except DQUOTE and backslash, obs-text.</summary>
    private static bool IsQuotedText(byte value) => HttpCharacters.IsFieldValueChar(value) && value != (byte)'"' && value != (byte)'\\';

    private void CountExtensionByte(HttpLimits limits)
    {
        if (++_extensionLength > limits.MaxChunkExtensionSize)
        {
            BadHttpRequestException.Throw(RequestRejectionReason.ChunkExtensionTooLong);
        }
    }

    private void StartChunk(HttpLimits limits)
    {
        if (_chunkSize == 0)
        {
            _trailers.Reset();
            _state = State.Trailers;
            return;
        }

        if (_chunkSize > limits.MaxRequestBodySize - _totalSize)
        {
            BadHttpRequestException.Throw(RequestRejectionReason.BodyTooLarge);
        }

        _totalSize += _chunkSize;
        _chunkRemaining = _chunkSize;
        _state = State.Data;
    }

    /// <summary>Refuses a field that must not be a trailer before the handler sees it (RFC 9110 section 6.5.1).</summary>
    private struct TrailerGuard<TTrailers>(TTrailers inner) : IHttpHeadersHandler
        where TTrailers : struct, IHttpHeadersHandler
    {
        public TTrailers Inner = inner;

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            if (TrailerFields.IsForbidden(name))
            {
                BadHttpRequestException.Throw(RequestRejectionReason.ForbiddenTrailerField);
            }

            return Inner.OnHeader(name, value);
        }

        public void OnHeadersComplete() => Inner.OnHeadersComplete();
    }

    /// <summary>Accepts every trailer field and forgets it.</summary>
    private struct DiscardTrailers : IHttpHeadersHandler
    {
        public readonly bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => true;

        public readonly void OnHeadersComplete()
        {
        }
    }
}
