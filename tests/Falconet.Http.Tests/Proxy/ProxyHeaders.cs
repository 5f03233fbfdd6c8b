using System;
using System.Buffers.Binary;
using System.Net;

namespace Falconet.Http.Tests.Proxy;

/// <summary>Builds PROXY protocol version 2 headers for the tests, field by field as the spec lays them out.</summary>
internal static class ProxyHeaders
{
    /// <summary>The 16-byte head (signature, version and command, family and transport, length), then the addresses and TLVs.</summary>
    public static byte[] V2(byte versionCommand, byte familyTransport, byte[] addresses, byte[] tlvs)
    {
        byte[] header = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, versionCommand, familyTransport, 0, 0, .. addresses, .. tlvs];
        BinaryPrimitives.WriteUInt16BigEndian(header.AsSpan(14), (ushort)(addresses.Length + tlvs.Length));
        return header;
    }

    public static byte[] Tlv(byte type, ReadOnlySpan<byte> value)
    {
        byte[] tlv = [type, 0, 0, .. value];
        BinaryPrimitives.WriteUInt16BigEndian(tlv.AsSpan(1), (ushort)value.Length);
        return tlv;
    }

    public static byte[] Address(string address) => IPAddress.Parse(address).GetAddressBytes();

    public static byte[] Ports(ushort source, ushort destination)
    {
        byte[] ports = new byte[4];
        BinaryPrimitives.WriteUInt16BigEndian(ports, source);
        BinaryPrimitives.WriteUInt16BigEndian(ports.AsSpan(2), destination);
        return ports;
    }
}
