using System;
using System.Buffers.Binary;
using System.Net;

namespace Falconet.Transport.Proxy;

/// <summary>The command of a PROXY header.</summary>
public enum ProxyCommand : byte
{
    /// <summary>The connection was made by the proxy itself (a health check): its own endpoints stand.</summary>
    Local,

    /// <summary>The connection relays a client's: the header carries the client's addresses.</summary>
    Proxy,
}

/// <summary>The address family of a PROXY header.</summary>
public enum ProxyAddressFamily : byte
{
    /// <summary>None given (version 1 <c>UNKNOWN</c>, version 2 <c>AF_UNSPEC</c>, or a LOCAL command): the connection's own endpoints stand.</summary>
    Unspecified,

    /// <summary>IPv4.</summary>
    InterNetwork,

    /// <summary>IPv6.</summary>
    InterNetworkV6,

    /// <summary>Unix socket paths (version 2 only); no IP endpoint, so the connection's own endpoints stand.</summary>
    Unix,
}

/// <summary>A parsed PROXY header: where it ends in the received bytes, its command, the addresses and where its TLVs are.</summary>
internal struct ProxyHeader
{
    /// <summary>1 or 2.</summary>
    public byte Version;

    /// <summary>The header's length in bytes; the client's own bytes start there.</summary>
    public int Length;

    public ProxyCommand Command;

    public ProxyAddressFamily Family;

    public ProxyAddress Source;

    public ProxyAddress Destination;

    public ushort SourcePort;

    public ushort DestinationPort;

    /// <summary>Where the TLVs start in the header (version 2), and their length; 0 when none.</summary>
    public int TlvOffset;

    public int TlvLength;

    /// <summary>True when the header names the client's IP endpoint (PROXY with IPv4 or IPv6).</summary>
    public readonly bool HasAddresses =>
        Command == ProxyCommand.Proxy && Family is ProxyAddressFamily.InterNetwork or ProxyAddressFamily.InterNetworkV6;
}

/// <summary>An IPv4 or IPv6 address as its bytes, kept inline (no object until an <see cref="IPAddress"/> is asked for).</summary>
internal struct ProxyAddress
{
    private ulong _high;
    private ulong _low;

    public static ProxyAddress FromV4(ReadOnlySpan<byte> bytes) => new() { _low = BinaryPrimitives.ReadUInt32BigEndian(bytes) };

    public static ProxyAddress FromV6(ReadOnlySpan<byte> bytes) => new()
    {
        _high = BinaryPrimitives.ReadUInt64BigEndian(bytes),
        _low = BinaryPrimitives.ReadUInt64BigEndian(bytes[8..]),
    };

    /// <summary>The address as an <see cref="IPAddress"/> of <paramref name="family"/> (the one object the client's address needs).</summary>
    public readonly IPAddress ToIPAddress(ProxyAddressFamily family)
    {
        Span<byte> bytes = stackalloc byte[16];
        if (family == ProxyAddressFamily.InterNetwork)
        {
            BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)_low);
            return new IPAddress(bytes[..4]);
        }

        BinaryPrimitives.WriteUInt64BigEndian(bytes, _high);
        BinaryPrimitives.WriteUInt64BigEndian(bytes[8..], _low);
        return new IPAddress(bytes);
    }

    /// <summary>
    /// Parses a version 1 address: IPv4 in strict dotted decimal (four parts, no leading zero), or IPv6 as RFC 4291 writes it
    /// (no zone). False for anything else.
    /// </summary>
    public static bool TryParseText(ReadOnlySpan<byte> text, ProxyAddressFamily family, ref ProxyAddress address)
    {
        if (family == ProxyAddressFamily.InterNetwork)
        {
            return TryParseV4(text, ref address);
        }

        if (text.Length > 45 || text.IndexOf((byte)':') < 0 || text.IndexOfAny((byte)'%', (byte)'[') >= 0
            || text.IndexOfAnyExceptInRange((byte)'!', (byte)'~') >= 0)
        {
            return false;
        }

        Span<char> chars = stackalloc char[45];
        for (int i = 0; i < text.Length; i++)
        {
            chars[i] = (char)text[i];
        }

        Span<byte> bytes = stackalloc byte[16];
        if (!IPAddress.TryParse(chars[..text.Length], out IPAddress? parsed) || !parsed.TryWriteBytes(bytes, out int written) || written != 16)
        {
            return false;
        }

        address = FromV6(bytes);
        return true;
    }

    private static bool TryParseV4(ReadOnlySpan<byte> text, ref ProxyAddress address)
    {
        uint value = 0;
        int parts = 0;
        int start = 0;
        for (int i = 0; i <= text.Length; i++)
        {
            if (i < text.Length && text[i] != (byte)'.')
            {
                continue;
            }

            ReadOnlySpan<byte> part = text[start..i];
            if (part.IsEmpty || part.Length > 3 || (part[0] == (byte)'0' && part.Length > 1))
            {
                return false;
            }

            int octet = 0;
            foreach (byte digit in part)
            {
                if ((uint)(digit - '0') > 9)
                {
                    return false;
                }

                octet = (octet * 10) + (digit - '0');
            }

            if (octet > 255 || ++parts > 4)
            {
                return false;
            }

            value = (value << 8) | (uint)octet;
            start = i + 1;
        }

        if (parts != 4)
        {
            return false;
        }

        address = new ProxyAddress { _low = value };
        return true;
    }
}
