using System;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// What <see cref="HPackDecoder.Decode{THandler}"/> hands the fields of a header block to. Implement it on a struct and
/// pass it by reference: the decoder is then compiled for it, and these calls are direct (and usually inlined).
/// </summary>
/// <remarks>
/// Spans are valid only during the call: they point into the header block, the dynamic table or the decoder's scratch
/// buffer. Fields arrive in block order; once the block is refused (see <see cref="HPackDecodeResult"/>) no more arrive.
/// </remarks>
public interface IHPackHeaderHandler
{
    /// <summary>
    /// The slot of a field name in the connection's header set: for a request, <c>THeaderSet.IndexOfRequestHeader(name)</c>
    /// (a bit index, <see cref="HeaderTable.ContentLengthIndex"/>, or -1). Called once per literal name, and once per
    /// dynamic table entry, when it is inserted: a field that refers to the entry later arrives with the slot, matched no
    /// more. The name is a lower-case token (the decoder refuses others as malformed before asking).
    /// </summary>
    int ResolveSlot(ReadOnlySpan<byte> name);

    /// <summary>A pseudo-header field (never <see cref="PseudoHeader.Unknown"/>: an undefined one makes the block malformed).</summary>
    void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value);

    /// <summary>
    /// A regular field: <paramref name="slot"/> is what <see cref="ResolveSlot"/> gave for its name (or the generated
    /// static-table slot), so a collection stores it with <c>TryAppendMatched(slot, name, value)</c>; -1 for a name
    /// outside the set. The name is a lower-case token; the value has been checked like an HTTP/1.1 field value.
    /// </summary>
    void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);
}
