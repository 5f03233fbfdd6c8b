using System.Runtime.InteropServices;

namespace Falconet.Transport;

/// <summary><c>struct iovec</c>: one buffer of a gathered send (the same layout on every 64-bit Linux).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct IoVector
{
    public byte* Base;
    public nuint Length;
}

/// <summary><c>struct msghdr</c> (56 bytes on 64-bit Linux): the io_uring transport's send and receive messages, the sockets transport's own <c>sendmsg</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct MessageHeader
{
    public void* Name;
    public uint NameLength;
    public IoVector* Vectors;
    public nuint VectorCount;
    public void* Control;
    public nuint ControlLength;
    public int Flags;
}
