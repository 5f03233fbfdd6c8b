using System;
using System.Buffers;
using Falconet.Text;

namespace Falconet.Http.Http2.HPack;

/// <summary>
/// The field codes the decoder keeps per name (for a static entry, a dynamic entry or a literal name) and the checks
/// of RFC 9113 section 8.2.1 that give them.
/// </summary>
/// <remarks>
/// A code below <see cref="PseudoHeaderFlag"/> is a slot of the request headers: a bit index, or
/// <see cref="HeaderTable.ContentLengthIndex"/>. The generated <see cref="HPackStaticTable.RequestSlots"/> uses the
/// same encoding, with <see cref="Unresolved"/> for a name the default schema does not know.
/// </remarks>
internal static class HPackFieldNames
{
    /// <summary>Set for a pseudo-header; the low bits are its <see cref="PseudoHeader"/> (0: an undefined one).</summary>
    public const byte PseudoHeaderFlag = 0x80;

    /// <summary>A name that is not a lower-case token: every field with it is malformed.</summary>
    public const byte InvalidName = 0xFD;

    /// <summary>A valid name outside the header set: delivered with slot -1 and its name.</summary>
    public const byte UnknownName = 0xFE;

    /// <summary>A static entry's name not yet matched against the connection's header set.</summary>
    public const byte Unresolved = 0xFF;

    // Lower-case tchar: RFC 9110 field names, without the upper-case letters HTTP/2 forbids.
    private static readonly SearchValues<byte> s_lowerCaseTokenBytes = SearchValues.Create("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"u8);

    /// <summary>The code of a literal name: a pseudo-header's, <see cref="InvalidName"/>, or <paramref name="resolve"/>'s slot.</summary>
    public static byte Classify<THandler>(ReadOnlySpan<byte> name, ref THandler resolve)
        where THandler : struct, IHPackHeaderHandler
    {
        if (name.IsEmpty)
        {
            return InvalidName;
        }

        if (name[0] == (byte)':')
        {
            return (byte)(PseudoHeaderFlag | (byte)ClassifyPseudoHeader(name));
        }

        if (name.IndexOfAnyExcept(s_lowerCaseTokenBytes) >= 0)
        {
            return InvalidName;
        }

        int slot = resolve.ResolveSlot(name);
        return (uint)slot <= HeaderTable.ContentLengthIndex ? (byte)slot : UnknownName;
    }

    /// <summary>The pseudo-header a name that starts with a colon stands for; <see cref="PseudoHeader.Unknown"/> for any other.</summary>
    public static PseudoHeader ClassifyPseudoHeader(ReadOnlySpan<byte> name) => name.Length switch
    {
        5 when name.SequenceEqual(":path"u8) => PseudoHeader.Path,
        7 when name.SequenceEqual(":method"u8) => PseudoHeader.Method,
        7 when name.SequenceEqual(":scheme"u8) => PseudoHeader.Scheme,
        7 when name.SequenceEqual(":status"u8) => PseudoHeader.Status,
        9 when name.SequenceEqual(":protocol"u8) => PseudoHeader.Protocol,
        10 when name.SequenceEqual(":authority"u8) => PseudoHeader.Authority,
        _ => PseudoHeader.Unknown,
    };

    /// <summary>
    /// True when a request may carry <paramref name="value"/>: the bytes of an HTTP/1.1 field value (no control character
    /// but HTAB, no DEL), and no whitespace at either end, which HTTP/2 does not trim (RFC 9113 section 8.2.1).
    /// </summary>
    public static bool IsValidValue(ReadOnlySpan<byte> value) => HasValidEnds(value) && HttpScanner.IndexOfFieldValueEnd(value) < 0;

    /// <summary>
    /// The part of <see cref="IsValidValue"/> left for a value whose bytes are known to be field-value bytes: no whitespace
    /// at either end.
    /// </summary>
    public static bool HasValidEnds(ReadOnlySpan<byte> value) =>
        value.IsEmpty || (!HttpCharacters.IsWhitespace(value[0]) && !HttpCharacters.IsWhitespace(value[^1]));
}
