using System;

namespace Falconet.Http;

/// <summary>
/// A header set generated from an app's own <c>*.headers.json</c>: its tables and the masked name matcher the parser
/// calls for every request header.
/// </summary>
/// <remarks>
/// Falconet.Generator implements it on a struct. The server's parsing code is generic over that struct, so the JIT
/// compiles it once for the set and calls <see cref="IndexOfRequestHeader"/> directly (and can inline it): no virtual
/// call per header. The tables list the default schema's headers first, at the bit indexes the runtime's own
/// <see cref="RequestHeaders"/> and <see cref="ResponseHeaders"/> use, then the app's.
/// </remarks>
public interface IHeaderSet
{
    /// <summary>The request headers of the set, in bit order, with their known values.</summary>
    static abstract HeaderTable RequestHeaderTable { get; }

    /// <summary>The response headers of the set, in bit order.</summary>
    static abstract HeaderTable ResponseHeaderTable { get; }

    /// <summary>
    /// The bit index of a request header name in any letter case, <see cref="HeaderTable.ContentLengthIndex"/>, or -1
    /// for a name outside the set; <paramref name="name"/> is already validated as a token.
    /// </summary>
    static abstract int IndexOfRequestHeader(ReadOnlySpan<byte> name);
}
