using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Falconet.Transport;

/// <summary>The Linux <c>sockaddr_in</c> and <c>sockaddr_in6</c> layouts, for transports that call the system directly (libuv, io_uring).</summary>
internal static class SocketAddressBytes
{
    public const int AddressFamilyInet = 2;
    public const int AddressFamilyInet6 = 10;

    /// <summary>The size of the largest address written by <see cref="Write"/>.</summary>
    public const int MaxLength = 28;

    /// <summary>Writes <paramref name="endpoint"/> as a <c>sockaddr_in</c> or <c>sockaddr_in6</c> into <paramref name="address"/> (28 bytes).</summary>
    public static void Write(IPEndPoint endpoint, Span<byte> address)
    {
        address.Clear();
        ushort port = (ushort)endpoint.Port;
        address[2] = (byte)(port >> 8);
        address[3] = (byte)port;
        if (endpoint.AddressFamily == AddressFamily.InterNetwork)
        {
            MemoryMarshal.Write(address, (ushort)AddressFamilyInet);
            endpoint.Address.TryWriteBytes(address.Slice(4, 4), out _);
        }
        else
        {
            MemoryMarshal.Write(address, (ushort)AddressFamilyInet6);
            endpoint.Address.TryWriteBytes(address.Slice(8, 16), out _);
            MemoryMarshal.Write(address.Slice(24), (uint)endpoint.Address.ScopeId);
        }
    }

    /// <summary>Reads a <c>sockaddr_in</c> or <c>sockaddr_in6</c>; null for another family.</summary>
    public static IPEndPoint? Read(ReadOnlySpan<byte> address)
    {
        ushort family = MemoryMarshal.Read<ushort>(address);
        int port = (address[2] << 8) | address[3];
        return family switch
        {
            AddressFamilyInet => new IPEndPoint(new IPAddress(address.Slice(4, 4)), port),
            AddressFamilyInet6 => new IPEndPoint(new IPAddress(address.Slice(8, 16), MemoryMarshal.Read<uint>(address.Slice(24))), port),
            _ => null,
        };
    }
}
