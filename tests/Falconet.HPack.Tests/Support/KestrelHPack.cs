using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;

namespace Falconet.HPack.Tests.Support;

/// <summary>
/// Kestrel's own HPACK decoder (<c>System.Net.Http.HPack.HPackDecoder</c>, internal to Microsoft.AspNetCore.Server.Kestrel.Core
/// in the shared framework), reached without copying its source: its constructor and <c>Decode</c> through
/// <see cref="UnsafeAccessorAttribute"/>, and its internal handler interface, <c>IHttpStreamHeadersHandler</c>,
/// implemented by a subclass of a handler of ours, emitted at run time in an assembly that ignores access checks to
/// Kestrel's.
/// </summary>
/// <remarks>
/// The handler class has the interface's five methods as plain public methods (<c>OnStaticIndexedHeader(int)</c>,
/// <c>OnStaticIndexedHeader(int, ReadOnlySpan&lt;byte&gt;)</c>, <c>OnHeader</c>, <c>OnHeadersComplete(bool)</c>,
/// <c>OnDynamicIndexedHeader(int?, ReadOnlySpan&lt;byte&gt;, ReadOnlySpan&lt;byte&gt;)</c>); the emitted subclass implements
/// each interface method with a non-virtual call to it, so Kestrel's decoder pays one interface call per field, as with
/// its own stream, and no more.
/// </remarks>
public static class KestrelHPack
{
    private const string KestrelAssembly = "Microsoft.AspNetCore.Server.Kestrel.Core";
    private const string DecoderType = "System.Net.Http.HPack.HPackDecoder, " + KestrelAssembly;
    private const string HandlerType = "System.Net.Http.IHttpStreamHeadersHandler, " + KestrelAssembly;

    private static readonly ConcurrentDictionary<Type, Type> s_emitted = new();
    private static readonly Lazy<ModuleBuilder> s_module = new(DefineModule);

    /// <summary>A Kestrel decoder with the given dynamic table size and header list limit.</summary>
    public static object CreateDecoder(int maxDynamicTableSize = 4096, int maxHeadersLength = 64 * 1024) =>
        NewDecoder(maxDynamicTableSize, maxHeadersLength);

    /// <summary>Decodes a whole block: every field goes to <paramref name="handler"/>. Throws Kestrel's HPackDecodingException on bad input.</summary>
    public static void Decode(object decoder, ReadOnlySpan<byte> block, object handler) => DecodeBlock(decoder, block, true, handler);

    /// <summary>A <typeparamref name="THandler"/> that Kestrel's decoder accepts: an instance of its emitted subclass.</summary>
    public static THandler CreateHandler<THandler>(params object[] arguments)
        where THandler : class =>
        (THandler)Activator.CreateInstance(s_emitted.GetOrAdd(typeof(THandler), Emit), arguments)!;

    [UnsafeAccessor(UnsafeAccessorKind.Constructor)]
    [return: UnsafeAccessorType(DecoderType)]
    private static extern object NewDecoder(int maxDynamicTableSize, int maxHeadersLength);

    [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "Decode")]
    private static extern void DecodeBlock([UnsafeAccessorType(DecoderType)] object decoder, ReadOnlySpan<byte> data, bool endHeaders,
        [UnsafeAccessorType(HandlerType)] object handler);

    private static ModuleBuilder DefineModule()
    {
        var assembly = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Falconet.KestrelBridge"), AssemblyBuilderAccess.Run);
        assembly.SetCustomAttribute(new CustomAttributeBuilder(
            typeof(IgnoresAccessChecksToAttribute).GetConstructor([typeof(string)])!, [KestrelAssembly]));
        return assembly.DefineDynamicModule("Falconet.KestrelBridge");
    }

    // sealed class <Base>ForKestrel : <Base>, IHttpStreamHeadersHandler, with <Base>'s constructor and each method calling the base's.
    private static Type Emit(Type baseType)
    {
        Type handlerInterface = Type.GetType(HandlerType, throwOnError: true)!;
        lock (s_module)
        {
            TypeBuilder type = s_module.Value.DefineType(baseType.Name + "ForKestrel", TypeAttributes.Public | TypeAttributes.Sealed, baseType, [handlerInterface]);
            ConstructorInfo baseConstructor = baseType.GetConstructors().Single();
            Type[] constructorParameters = Array.ConvertAll(baseConstructor.GetParameters(), static p => p.ParameterType);
            ILGenerator ctor = type.DefineConstructor(MethodAttributes.Public, CallingConventions.Standard, constructorParameters).GetILGenerator();
            for (int i = 0; i <= constructorParameters.Length; i++)
            {
                ctor.Emit(OpCodes.Ldarg, (short)i);
            }

            ctor.Emit(OpCodes.Call, baseConstructor);
            ctor.Emit(OpCodes.Ret);

            foreach (MethodInfo method in handlerInterface.GetMethods())
            {
                Type[] parameters = Array.ConvertAll(method.GetParameters(), static p => p.ParameterType);
                MethodInfo target = baseType.GetMethod(method.Name, parameters)
                    ?? throw new InvalidOperationException(baseType + " has no public method " + method);
                MethodBuilder stub = type.DefineMethod(method.Name,
                    MethodAttributes.Public | MethodAttributes.Virtual | MethodAttributes.Final | MethodAttributes.HideBySig | MethodAttributes.NewSlot,
                    method.ReturnType, parameters);
                ILGenerator il = stub.GetILGenerator();
                for (int i = 0; i <= parameters.Length; i++)
                {
                    il.Emit(OpCodes.Ldarg, (short)i);
                }

                il.Emit(OpCodes.Call, target);
                il.Emit(OpCodes.Ret);
                type.DefineMethodOverride(stub, method);
            }

            return type.CreateType();
        }
    }
}
