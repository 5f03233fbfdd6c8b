using System;
using Falconet.Http;
using Falconet.Http.Http2.HPack;

namespace Falconet.HPack.Tests.Support;

/// <summary>
/// What an HTTP/2 connection's handler does with the fields: regular ones into the request's header collection through
/// its slot and the collection's value reuse (<c>TryAppendMatched</c>, as the HTTP/1.1 parser's handler), names matched
/// with the set's matcher; pseudo-headers counted.
/// </summary>
internal struct CollectionHandler<THeaderSet>(RequestHeaders headers) : IHPackHeaderHandler
    where THeaderSet : struct, IHeaderSet
{
    public int PseudoHeaders;

    public readonly int ResolveSlot(ReadOnlySpan<byte> name) => THeaderSet.IndexOfRequestHeader(name);

    public void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value) => PseudoHeaders++;

    public readonly void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => headers.TryAppendMatched(slot, name, value);
}
