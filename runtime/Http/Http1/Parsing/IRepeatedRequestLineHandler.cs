using System;

namespace Falconet.Http.Http1;

/// <summary>A request line sink that keeps the line it was given last, so that a byte-for-byte repeat of it needs no parse.</summary>
/// <remarks>
/// The line kept is always the previous request's: any request line handed on in another way (another parse of the line)
/// forgets it. <see cref="Http1Parser.TryParseRepeatableRequestHead"/> relies on that to skip
/// <see cref="IHttpHeadersHandler.OnHeadersComplete"/> for a head that repeats the previous one whole.
/// </remarks>
internal interface IRepeatedRequestLineHandler
{
    /// <summary>
    /// When <paramref name="received"/> starts with the request line kept last (up to and including its CRLF), takes that
    /// line's method, target and version as this request's and returns its length; otherwise 0, with nothing handed on.
    /// </summary>
    int TryRepeatRequestLine(ReadOnlySpan<byte> received);

    /// <summary>Keeps the bytes of the request line just handed on (up to and including its CRLF).</summary>
    void RememberRequestLine(ReadOnlySpan<byte> line);

    /// <summary>
    /// When <paramref name="received"/> starts with the head kept by <see cref="RememberRequestHead"/> while the line and the
    /// section it was made of are still the kept ones, takes that head whole (line and headers) and returns its length;
    /// otherwise 0, with nothing handed on.
    /// </summary>
    int TryRepeatRequestHead(ReadOnlySpan<byte> received);

    /// <summary>Keeps the bytes of a head whose line and section both repeated the kept ones, as one run.</summary>
    void RememberRequestHead(ReadOnlySpan<byte> head);
}
