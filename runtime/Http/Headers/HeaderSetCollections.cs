using System;

namespace Falconet.Http;

/// <summary>
/// The request headers of an app's own header set: the default schema's typed properties, inherited, and the app's own
/// as extension properties generated with <typeparamref name="THeaderSet"/>.
/// </summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class RequestHeaders<THeaderSet> : RequestHeaders
    where THeaderSet : struct, IHeaderSet
{
    /// <summary>An empty collection of the set's request headers.</summary>
    public RequestHeaders()
        : base(THeaderSet.RequestHeaderTable)
    {
    }

    /// <inheritdoc/>
    public override bool TryAppend(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        => TryAppendMatched(THeaderSet.IndexOfRequestHeader(name), name, value);
}

/// <summary>
/// The response headers of an app's own header set: the default schema's typed properties, inherited, and the app's own
/// as extension properties generated with <typeparamref name="THeaderSet"/>.
/// </summary>
/// <typeparam name="THeaderSet">The header set Falconet.Generator emitted from the app's <c>*.headers.json</c>.</typeparam>
public sealed class ResponseHeaders<THeaderSet> : ResponseHeaders
    where THeaderSet : struct, IHeaderSet
{
    /// <summary>An empty collection of the set's response headers.</summary>
    public ResponseHeaders()
        : base(THeaderSet.ResponseHeaderTable)
    {
    }
}
