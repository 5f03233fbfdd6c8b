using System;
using System.Buffers;
using Falconet.Text;

namespace Falconet.Http;

/// <summary>Incremental decoder of the chunked transfer coding (RFC 9112 section 7.1): copies body bytes out of the input.</summary>
/// <remarks>
/// A state machine that can stop after any byte, so input may arrive one byte at a time or split anywhere
/// across segments. Chunk-size lines and the CRLF after each chunk are checked strictly; chunk extensions
/// are validated and bounded but ignored; trailer fields are parsed like header fields and discarded, or
/// handed to a handler through <see cref="Decode{TTrailers}"/>.
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
        ExtensionWhitespace,
        Extension,
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
                    if (!Http1Parser.TryParseHeaders(ref trailers, ref input, limits, ref _trailers))
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
                if (next == (byte)';')
                {
                    _state = State.Extension;
                }
                else if (!HttpCharacters.IsWhitespace(next))
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.InvalidChunkExtension);
                }

                CountExtensionByte(limits);
                return;

            case State.Extension:
                if (next == (byte)'\r')
                {
                    _state = State.ChunkSizeLineFeed;
                    return;
                }

                if (!HttpCharacters.IsFieldValueChar(next))
                {
                    BadHttpRequestException.Throw(RequestRejectionReason.InvalidChunkExtension);
                }

                CountExtensionByte(limits);
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
                _state = State.Extension;
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

    /// <summary>Accepts every trailer field and forgets it.</summary>
    private struct DiscardTrailers : IHttpHeadersHandler
    {
        public readonly bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => true;

        public readonly void OnHeadersComplete()
        {
        }
    }
}
