using System;
using System.Buffers.Binary;
using System.Numerics;

namespace Falconet.Transport.Proxy;

/// <summary>What <see cref="ProxyHeaderParser.TryParse"/> found at the start of a connection's bytes.</summary>
internal enum ProxyParseStatus : byte
{
    /// <summary>A whole, valid header: <see cref="ProxyHeader"/> describes it.</summary>
    Complete,

    /// <summary>Valid so far; more bytes are needed (never returned past the size limit).</summary>
    NeedMore,

    /// <summary>Not a PROXY header, or a malformed, oversized or unsupported one: the connection is refused.</summary>
    Invalid,
}

/// <summary>
/// The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and 2) that a load balancer sends before the client's
/// bytes: parsed in place from the first bytes of a connection, without copying or allocating.
/// </summary>
/// <remarks>
/// A receiver must not guess (section 2 of the spec): an endpoint that takes PROXY takes nothing else, so bytes that start
/// neither signature are refused at once. Version 1 is a text line of at most 107 bytes; version 2 a 16-byte binary head
/// and up to 65,535 bytes of addresses and TLVs, bounded here by the caller's limit. Every failure has a stable reason name.
/// </remarks>
internal static class ProxyHeaderParser
{
    /// <summary>The longest version 1 line, CRLF included (section 2.1).</summary>
    public const int MaxV1Length = 107;

    /// <summary>The fixed part of a version 2 header: signature, version and command, family and transport, length.</summary>
    public const int V2FixedLength = 16;

    private const byte CommandLocal = 0x0;
    private const byte CommandProxy = 0x1;

    /// <summary>The version 2 signature: \r\n\r\n\0\r\nQUIT\n.</summary>
    private static ReadOnlySpan<byte> V2Signature => [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A];

    private static ReadOnlySpan<byte> V1Prefix => "PROXY "u8;

    /// <summary>
    /// Parses the header at the start of <paramref name="data"/> (the bytes received so far). <paramref name="maxLength"/>
    /// bounds a version 2 header (fixed part included); a longer one is <see cref="ProxyParseStatus.Invalid"/> with reason
    /// <c>too_large</c> as soon as its length field is read.
    /// </summary>
    public static ProxyParseStatus TryParse(ReadOnlySpan<byte> data, int maxLength, out ProxyHeader header, out string? reason)
    {
        header = default;
        reason = null;
        if (data.IsEmpty)
        {
            return ProxyParseStatus.NeedMore;
        }

        if (data[0] == V2Signature[0])
        {
            return TryParseV2(data, maxLength, out header, out reason);
        }

        if (data[0] == (byte)'P')
        {
            return TryParseV1(data, out header, out reason);
        }

        reason = ProxyRejections.NotProxy;
        return ProxyParseStatus.Invalid;
    }

    private static ProxyParseStatus TryParseV1(ReadOnlySpan<byte> data, out ProxyHeader header, out string? reason)
    {
        header = default;
        reason = null;
        int prefix = Math.Min(data.Length, V1Prefix.Length);
        if (!data[..prefix].SequenceEqual(V1Prefix[..prefix]))
        {
            reason = ProxyRejections.NotProxy;
            return ProxyParseStatus.Invalid;
        }

        if (data.Length <= V1Prefix.Length)
        {
            return ProxyParseStatus.NeedMore;
        }

        ReadOnlySpan<byte> window = data[..Math.Min(data.Length, MaxV1Length)];
        int lineFeed = window.IndexOf((byte)'\n');
        if (lineFeed < 0)
        {
            if (data.Length >= MaxV1Length)
            {
                reason = ProxyRejections.TooLarge;
                return ProxyParseStatus.Invalid;
            }

            // A byte outside printable ASCII can never become a valid line (a CR only as the last byte so far): refuse it
            // before the line completes, so a client cannot hold the connection with garbage.
            ReadOnlySpan<byte> fields = window[V1Prefix.Length..];
            int stray = fields.IndexOfAnyExceptInRange((byte)' ', (byte)'~');
            if (stray >= 0 && !(stray == fields.Length - 1 && fields[stray] == (byte)'\r'))
            {
                reason = ProxyRejections.Malformed;
                return ProxyParseStatus.Invalid;
            }

            return ProxyParseStatus.NeedMore;
        }

        if (lineFeed == 0 || window[lineFeed - 1] != (byte)'\r')
        {
            reason = ProxyRejections.Malformed;
            return ProxyParseStatus.Invalid;
        }

        ReadOnlySpan<byte> line = window[V1Prefix.Length..(lineFeed - 1)];
        if (!ParseV1Fields(line, ref header))
        {
            reason = ProxyRejections.Malformed;
            return ProxyParseStatus.Invalid;
        }

        header.Version = 1;
        header.Length = lineFeed + 1;
        return ProxyParseStatus.Complete;
    }

    /// <summary>"TCP4 src dst sport dport", "TCP6 ...", or "UNKNOWN" followed by anything (section 2.1).</summary>
    private static bool ParseV1Fields(ReadOnlySpan<byte> line, ref ProxyHeader header)
    {
        if (line.StartsWith("UNKNOWN"u8) && (line.Length == 7 || line[7] == (byte)' '))
        {
            // The sender could not tell the addresses: the connection's own endpoints stand.
            header.Command = ProxyCommand.Proxy;
            header.Family = ProxyAddressFamily.Unspecified;
            return line.IndexOfAnyExceptInRange((byte)' ', (byte)'~') < 0;
        }

        ProxyAddressFamily family;
        if (line.StartsWith("TCP4 "u8))
        {
            family = ProxyAddressFamily.InterNetwork;
        }
        else if (line.StartsWith("TCP6 "u8))
        {
            family = ProxyAddressFamily.InterNetworkV6;
        }
        else
        {
            return false;
        }

        ReadOnlySpan<byte> rest = line[5..];
        if (!NextField(ref rest, out ReadOnlySpan<byte> source) || !NextField(ref rest, out ReadOnlySpan<byte> destination)
            || !NextField(ref rest, out ReadOnlySpan<byte> sourcePort) || !NextField(ref rest, out ReadOnlySpan<byte> destinationPort)
            || !rest.IsEmpty)
        {
            return false;
        }

        header.Command = ProxyCommand.Proxy;
        header.Family = family;
        return ProxyAddress.TryParseText(source, family, ref header.Source)
            && ProxyAddress.TryParseText(destination, family, ref header.Destination)
            && TryParsePort(sourcePort, out header.SourcePort)
            && TryParsePort(destinationPort, out header.DestinationPort);
    }

    /// <summary>Takes the next field, ended by one space or the end of the line; an empty field (two spaces) fails.</summary>
    private static bool NextField(ref ReadOnlySpan<byte> rest, out ReadOnlySpan<byte> field)
    {
        int space = rest.IndexOf((byte)' ');
        if (space < 0)
        {
            field = rest;
            rest = default;
        }
        else
        {
            field = rest[..space];
            rest = rest[(space + 1)..];
            if (rest.IsEmpty)
            {
                // A trailing space leaves an empty last field.
                return false;
            }
        }

        return !field.IsEmpty;
    }

    /// <summary>A decimal port 0-65535 without a leading zero (section 2.1: "0..65535", never padded).</summary>
    private static bool TryParsePort(ReadOnlySpan<byte> text, out ushort port)
    {
        port = 0;
        if (text.IsEmpty || text.Length > 5 || (text[0] == (byte)'0' && text.Length > 1))
        {
            return false;
        }

        int value = 0;
        foreach (byte digit in text)
        {
            if ((uint)(digit - '0') > 9)
            {
                return false;
            }

            value = (value * 10) + (digit - '0');
        }

        if (value > ushort.MaxValue)
        {
            return false;
        }

        port = (ushort)value;
        return true;
    }

    private static ProxyParseStatus TryParseV2(ReadOnlySpan<byte> data, int maxLength, out ProxyHeader header, out string? reason)
    {
        header = default;
        reason = null;
        int signature = Math.Min(data.Length, V2Signature.Length);
        if (!data[..signature].SequenceEqual(V2Signature[..signature]))
        {
            reason = ProxyRejections.NotProxy;
            return ProxyParseStatus.Invalid;
        }

        if (data.Length < V2FixedLength)
        {
            if (data.Length > 12 && (data[12] >> 4) != 2)
            {
                reason = ProxyRejections.UnsupportedVersion;
                return ProxyParseStatus.Invalid;
            }

            return ProxyParseStatus.NeedMore;
        }

        byte versionCommand = data[12];
        if ((versionCommand >> 4) != 2)
        {
            reason = ProxyRejections.UnsupportedVersion;
            return ProxyParseStatus.Invalid;
        }

        byte command = (byte)(versionCommand & 0x0F);
        if (command is not (CommandLocal or CommandProxy))
        {
            reason = ProxyRejections.Malformed;
            return ProxyParseStatus.Invalid;
        }

        int length = V2FixedLength + BinaryPrimitives.ReadUInt16BigEndian(data[14..]);
        if (length > maxLength)
        {
            reason = ProxyRejections.TooLarge;
            return ProxyParseStatus.Invalid;
        }

        if (data.Length < length)
        {
            return ProxyParseStatus.NeedMore;
        }

        ReadOnlySpan<byte> whole = data[..length];
        ReadOnlySpan<byte> body = whole[V2FixedLength..];
        header.Version = 2;
        header.Length = length;
        header.Command = command == CommandLocal ? ProxyCommand.Local : ProxyCommand.Proxy;
        byte familyTransport = data[13];
        int addressLength;
        switch (familyTransport >> 4)
        {
            case 0x0:
                header.Family = ProxyAddressFamily.Unspecified;
                addressLength = 0;
                break;
            case 0x1:
                header.Family = ProxyAddressFamily.InterNetwork;
                addressLength = 12;
                break;
            case 0x2:
                header.Family = ProxyAddressFamily.InterNetworkV6;
                addressLength = 36;
                break;
            case 0x3:
                header.Family = ProxyAddressFamily.Unix;
                addressLength = 216;
                break;
            default:
                reason = ProxyRejections.Malformed;
                return ProxyParseStatus.Invalid;
        }

        int transport = familyTransport & 0x0F;
        if (transport > 2 || (header.Command == ProxyCommand.Proxy && header.Family != ProxyAddressFamily.Unspecified && transport == 0))
        {
            reason = ProxyRejections.Malformed;
            return ProxyParseStatus.Invalid;
        }

        if (header.Command == ProxyCommand.Local)
        {
            // Section 2.2: the receiver uses the real endpoints and skips the whole block, addresses and TLVs alike.
            header.Family = ProxyAddressFamily.Unspecified;
            header.TlvOffset = header.TlvLength = 0;
            return ProxyParseStatus.Complete;
        }

        if (body.Length < addressLength)
        {
            reason = ProxyRejections.Malformed;
            return ProxyParseStatus.Invalid;
        }

        switch (header.Family)
        {
            case ProxyAddressFamily.InterNetwork:
                header.Source = ProxyAddress.FromV4(body[..4]);
                header.Destination = ProxyAddress.FromV4(body[4..8]);
                header.SourcePort = BinaryPrimitives.ReadUInt16BigEndian(body[8..]);
                header.DestinationPort = BinaryPrimitives.ReadUInt16BigEndian(body[10..]);
                break;
            case ProxyAddressFamily.InterNetworkV6:
                header.Source = ProxyAddress.FromV6(body[..16]);
                header.Destination = ProxyAddress.FromV6(body[16..32]);
                header.SourcePort = BinaryPrimitives.ReadUInt16BigEndian(body[32..]);
                header.DestinationPort = BinaryPrimitives.ReadUInt16BigEndian(body[34..]);
                break;
        }

        header.TlvOffset = V2FixedLength + addressLength;
        header.TlvLength = length - header.TlvOffset;
        ReadOnlySpan<byte> tlvs = whole[header.TlvOffset..];
        if (!ProxyTlvs.Validate(tlvs, out int checksumAt, out reason))
        {
            return ProxyParseStatus.Invalid;
        }

        if (checksumAt >= 0 && !ChecksumMatches(whole, header.TlvOffset + checksumAt))
        {
            reason = ProxyRejections.BadChecksum;
            return ProxyParseStatus.Invalid;
        }

        return ProxyParseStatus.Complete;
    }

    /// <summary>PP2_TYPE_CRC32C: the CRC32c of the whole header with the checksum's own four bytes taken as zero.</summary>
    private static bool ChecksumMatches(ReadOnlySpan<byte> whole, int valueOffset)
    {
        uint crc = uint.MaxValue;
        for (int i = 0; i < whole.Length; i++)
        {
            byte value = i >= valueOffset && i < valueOffset + 4 ? (byte)0 : whole[i];
            crc = BitOperations.Crc32C(crc, value);
        }

        return ~crc == BinaryPrimitives.ReadUInt32BigEndian(whole[valueOffset..]);
    }
}

/// <summary>
/// The stable names of the reasons a PROXY endpoint refuses a connection: the <c>falconet.reason</c> tag of
/// <c>falconet.server.rejected_connections</c> and the log's reason field.
/// </summary>
internal static class ProxyRejections
{
    /// <summary>The bytes start neither PROXY signature (plain HTTP, TLS, or anything else sent to a PROXY endpoint).</summary>
    public const string NotProxy = "proxy_header_missing";

    /// <summary>A header that breaks the grammar: fields, addresses, ports, command, family, TLV framing.</summary>
    public const string Malformed = "proxy_header_malformed";

    /// <summary>A version 1 line past 107 bytes, or a version 2 header past the endpoint's limit.</summary>
    public const string TooLarge = "proxy_header_too_large";

    /// <summary>A version 2 signature with a version other than 2.</summary>
    public const string UnsupportedVersion = "proxy_header_version";

    /// <summary>A PP2_TYPE_CRC32C that does not match the header.</summary>
    public const string BadChecksum = "proxy_header_checksum";

    /// <summary>The header did not arrive within the endpoint's header timeout.</summary>
    public const string Timeout = "proxy_header_timeout";

    /// <summary>The peer closed or reset the connection before the header was complete.</summary>
    public const string Truncated = "proxy_header_truncated";

    /// <summary>The connection came from an address outside the endpoint's trusted proxies.</summary>
    public const string UntrustedProxy = "proxy_untrusted_peer";

    /// <summary>The server stopped while the header was awaited, or before its connection was taken.</summary>
    public const string ServerStopping = "server_stopping";
}
