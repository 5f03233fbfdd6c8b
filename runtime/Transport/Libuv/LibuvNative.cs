using System;
using System.Runtime.InteropServices;

namespace Falconet.Transport.Libuv;

/// <summary>The part of libuv's C API the transport calls (libuv 1.x, the Debian package libuv1), bound at build time by the interop source generator.</summary>
/// <remarks>
/// Handles and requests are allocated with <see cref="NativeMemory"/> at the sizes libuv reports, so no struct layout
/// but two is mirrored here: <c>uv_buf_t</c> (base, len on Unix) and the leading <c>void* data</c> field every handle
/// and request starts with, which carries a <see cref="GCHandle"/> to the managed owner. Callbacks are
/// <c>[UnmanagedCallersOnly]</c> function pointers: no delegate exists, so none can be collected while libuv holds it.
/// </remarks>
internal static unsafe partial class LibuvNative
{
    /// <summary>The file name the dynamic loader looks for (the soname of libuv 1.x).</summary>
    public const string LibraryName = "libuv.so.1";

    /// <summary>The Debian package that provides <see cref="LibraryName"/>.</summary>
    public const string PackageName = "libuv1";

    private const string Lib = LibraryName;

    public const int HandleTypeAsync = 1;
    public const int HandleTypeTcp = 12;
    public const int HandleTypeNamedPipe = 7;
    public const int RequestTypeWrite = 3;

    public const int RunDefault = 0;
    public const int RunNoWait = 2;

    // libuv returns negated errno values on Unix; end of stream has its own code.
    public const int EOF = -4095;
    public const int EAGAIN = -11;
    public const int ECANCELED = -125;
    public const int ECONNRESET = -104;
    public const int EPIPE = -32;
    public const int ENOBUFS = -105;
    public const int ENOTCONN = -107;
    public const int EMFILE = -24;
    public const int ENFILE = -23;

    public const int AddressFamilyInet = 2;
    public const int AddressFamilyInet6 = 10;

    /// <summary>One buffer of a read or a gathered write (Unix layout: base, then length).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Buffer
    {
        public byte* Base;
        public nint Length;

        public Buffer(byte* pointer, int length)
        {
            Base = pointer;
            Length = length;
        }
    }

    [LibraryImport(Lib, EntryPoint = "uv_version")]
    public static partial uint Version();

    [LibraryImport(Lib, EntryPoint = "uv_loop_size")]
    public static partial nuint LoopSize();

    [LibraryImport(Lib, EntryPoint = "uv_handle_size")]
    public static partial nuint HandleSize(int type);

    [LibraryImport(Lib, EntryPoint = "uv_req_size")]
    public static partial nuint RequestSize(int type);

    [LibraryImport(Lib, EntryPoint = "uv_loop_init")]
    public static partial int LoopInit(void* loop);

    [LibraryImport(Lib, EntryPoint = "uv_loop_close")]
    public static partial int LoopClose(void* loop);

    [LibraryImport(Lib, EntryPoint = "uv_run")]
    public static partial int Run(void* loop, int mode);

    [LibraryImport(Lib, EntryPoint = "uv_walk")]
    public static partial void Walk(void* loop, delegate* unmanaged<void*, void*, void> walkCallback, void* argument);

    [LibraryImport(Lib, EntryPoint = "uv_async_init")]
    public static partial int AsyncInit(void* loop, void* async, delegate* unmanaged<void*, void> callback);

    [LibraryImport(Lib, EntryPoint = "uv_async_send")]
    public static partial int AsyncSend(void* async);

    [LibraryImport(Lib, EntryPoint = "uv_close")]
    public static partial void Close(void* handle, delegate* unmanaged<void*, void> closeCallback);

    [LibraryImport(Lib, EntryPoint = "uv_is_closing")]
    public static partial int IsClosing(void* handle);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_init")]
    public static partial int TcpInit(void* loop, void* tcp);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_init_ex")]
    public static partial int TcpInitEx(void* loop, void* tcp, uint flags);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_bind")]
    public static partial int TcpBind(void* tcp, byte* address, uint flags);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_nodelay")]
    public static partial int TcpNoDelay(void* tcp, int enable);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_getsockname")]
    public static partial int TcpGetSockName(void* tcp, byte* address, int* length);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_getpeername")]
    public static partial int TcpGetPeerName(void* tcp, byte* address, int* length);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_close_reset")]
    public static partial int TcpCloseReset(void* tcp, delegate* unmanaged<void*, void> closeCallback);

    [LibraryImport(Lib, EntryPoint = "uv_tcp_open")]
    public static partial int TcpOpen(void* tcp, nint socket);

    [LibraryImport(Lib, EntryPoint = "uv_pipe_init")]
    public static partial int PipeInit(void* loop, void* pipe, int ipc);

    [LibraryImport(Lib, EntryPoint = "uv_pipe_open")]
    public static partial int PipeOpen(void* pipe, int fd);

    [LibraryImport(Lib, EntryPoint = "uv_fileno")]
    public static partial int FileNo(void* handle, nint* fd);

    [LibraryImport(Lib, EntryPoint = "uv_listen")]
    public static partial int Listen(void* stream, int backlog, delegate* unmanaged<void*, int, void> connectionCallback);

    [LibraryImport(Lib, EntryPoint = "uv_accept")]
    public static partial int Accept(void* server, void* client);

    [LibraryImport(Lib, EntryPoint = "uv_read_start")]
    public static partial int ReadStart(void* stream, delegate* unmanaged<void*, nuint, Buffer*, void> allocCallback, delegate* unmanaged<void*, nint, Buffer*, void> readCallback);

    [LibraryImport(Lib, EntryPoint = "uv_read_stop")]
    public static partial int ReadStop(void* stream);

    [LibraryImport(Lib, EntryPoint = "uv_try_write")]
    public static partial int TryWrite(void* stream, Buffer* buffers, uint count);

    [LibraryImport(Lib, EntryPoint = "uv_write")]
    public static partial int Write(void* request, void* stream, Buffer* buffers, uint count, delegate* unmanaged<void*, int, void> writeCallback);

    [LibraryImport(Lib, EntryPoint = "uv_err_name")]
    private static partial byte* ErrorNamePointer(int error);

    [LibraryImport(Lib, EntryPoint = "uv_strerror")]
    private static partial byte* ErrorTextPointer(int error);

    // Socket calls libuv 1.44 does not wrap: SO_REUSEPORT before bind, and shutdown(SHUT_WR) at once
    // (uv_shutdown waits for the next loop turn, and a close in between would cancel it).
    [LibraryImport("libc", EntryPoint = "setsockopt", SetLastError = true)]
    public static partial int SetSocketOption(int fd, int level, int name, int* value, uint length);

    [LibraryImport("libc", EntryPoint = "getsockopt", SetLastError = true)]
    public static partial int GetSocketOption(int fd, int level, int name, int* value, uint* length);

    [LibraryImport("libc", EntryPoint = "dup", SetLastError = true)]
    public static partial int Duplicate(int fd);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    public static partial int CloseDescriptor(int fd);

    [LibraryImport("libc", EntryPoint = "shutdown", SetLastError = true)]
    public static partial int Shutdown(int fd, int how);

    // A receive right after a wait for data found the socket readable: one recv, without waiting for the next loop turn.
    [LibraryImport("libc", EntryPoint = "recv", SetLastError = true)]
    public static partial nint Receive(int fd, byte* buffer, nuint length, int flags);

    public const int MsgDontWait = 0x40;

    public const int SolSocket = 1;
    public const int IpProtoTcp = 6;
    public const int TcpNoDelayOption = 1;
    public const int SoReusePort = 15;
    public const int ShutWrite = 1;

    /// <summary>Reads the <c>data</c> field every handle and request starts with.</summary>
    public static nint GetData(void* handleOrRequest) => *(nint*)handleOrRequest;

    /// <summary>Writes the <c>data</c> field every handle and request starts with.</summary>
    public static void SetData(void* handleOrRequest, nint value) => *(nint*)handleOrRequest = value;

    /// <summary>libuv's name of an error code, e.g. <c>ECONNRESET</c>.</summary>
    public static string ErrorName(int error) => Marshal.PtrToStringUTF8((nint)ErrorNamePointer(error)) ?? error.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>libuv's text of an error code, e.g. <c>connection reset by peer</c>.</summary>
    public static string ErrorText(int error) => Marshal.PtrToStringUTF8((nint)ErrorTextPointer(error)) ?? string.Empty;

    /// <summary>Throws a <see cref="LibuvException"/> naming the failed call when <paramref name="result"/> is an error.</summary>
    public static int Check(int result, string call)
    {
        if (result < 0)
        {
            throw new LibuvException(call, result);
        }

        return result;
    }
}

/// <summary>A libuv call failed; <see cref="ErrorName"/> is libuv's name of the error (e.g. <c>EADDRINUSE</c>).</summary>
public sealed class LibuvException : System.IO.IOException
{
    internal LibuvException(string call, int error)
        : base($"{call} failed: {LibuvNative.ErrorName(error)} ({LibuvNative.ErrorText(error)}).", error)
    {
        Call = call;
        ErrorCode = error;
        ErrorName = LibuvNative.ErrorName(error);
    }

    /// <summary>The libuv function that failed.</summary>
    public string Call { get; }

    /// <summary>libuv's (negative) error code.</summary>
    public int ErrorCode { get; }

    /// <summary>libuv's name of the error, e.g. <c>ECONNRESET</c>.</summary>
    public string ErrorName { get; }
}
