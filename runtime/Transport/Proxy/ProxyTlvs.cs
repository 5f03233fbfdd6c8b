using System;
using System.Buffers.Binary;

namespace Falconet.Transport.Proxy;

/// <summary>The type-length-value fields of a version 2 PROXY header (section 2.2.7 of the spec): validated once, then looked up.</summary>
internal static class ProxyTlvs
{
    public const byte Alpn = 0x01;
    public const byte Authority = 0x02;
    public const byte Crc32c = 0x03;
    public const byte Noop = 0x04;
    public const byte UniqueId = 0x05;
    public const byte Ssl = 0x20;
    public const byte SslVersion = 0x21;
    public const byte SslCommonName = 0x22;
    public const byte SslCipher = 0x23;
    public const byte SslSignatureAlgorithm = 0x24;
    public const byte SslKeyAlgorithm = 0x25;
    public const byte NetNamespace = 0x30;

    /// <summary>The longest PP2_TYPE_UNIQUE_ID value the spec allows.</summary>
    public const int MaxUniqueIdLength = 128;

    /// <summary>
    /// Checks that <paramref name="tlvs"/> is a whole sequence of fields, each within the block, and that the known ones
    /// have lengths the spec allows (the SSL field's sub-fields included). Unknown types are allowed and ignored, as the spec
    /// asks. <paramref name="checksumAt"/> is where a CRC32C value starts, or -1.
    /// </summary>
    public static bool Validate(ReadOnlySpan<byte> tlvs, out int checksumAt, out string? reason)
    {
        checksumAt = -1;
        reason = null;
        int offset = 0;
        while (offset < tlvs.Length)
        {
            if (!TryRead(tlvs, offset, out byte type, out int valueOffset, out int length))
            {
                reason = ProxyRejections.Malformed;
                return false;
            }

            bool valid = type switch
            {
                Alpn or Authority => length > 0,
                Crc32c => length == 4 && checksumAt < 0,
                UniqueId => length <= MaxUniqueIdLength,
                Ssl => length >= 5 && IsWholeSequence(tlvs.Slice(valueOffset + 5, length - 5)),
                _ => true,
            };
            if (!valid)
            {
                reason = ProxyRejections.Malformed;
                return false;
            }

            if (type == Crc32c)
            {
                checksumAt = valueOffset;
            }

            offset = valueOffset + length;
        }

        return true;
    }

    /// <summary>Finds the first field of <paramref name="type"/> in validated <paramref name="tlvs"/>.</summary>
    public static bool TryFind(ReadOnlySpan<byte> tlvs, byte type, out int valueOffset, out int length)
    {
        int offset = 0;
        while (TryRead(tlvs, offset, out byte found, out valueOffset, out length))
        {
            if (found == type)
            {
                return true;
            }

            offset = valueOffset + length;
        }

        valueOffset = length = 0;
        return false;
    }

    private static bool IsWholeSequence(ReadOnlySpan<byte> tlvs)
    {
        int offset = 0;
        while (offset < tlvs.Length)
        {
            if (!TryRead(tlvs, offset, out _, out int valueOffset, out int length))
            {
                return false;
            }

            offset = valueOffset + length;
        }

        return true;
    }

    private static bool TryRead(ReadOnlySpan<byte> tlvs, int offset, out byte type, out int valueOffset, out int length)
    {
        type = 0;
        valueOffset = length = 0;
        if (tlvs.Length - offset < 3)
        {
            return false;
        }

        type = tlvs[offset];
        length = BinaryPrimitives.ReadUInt16BigEndian(tlvs[(offset + 1)..]);
        valueOffset = offset + 3;
        return length <= tlvs.Length - valueOffset;
    }
}
