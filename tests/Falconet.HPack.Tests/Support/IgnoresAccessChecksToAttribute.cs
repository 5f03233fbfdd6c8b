namespace System.Runtime.CompilerServices;

/// <summary>
/// Read by the runtime (by name) on an assembly: its code may use the non-public types of the named assembly. Set on the
/// dynamic assembly that implements Kestrel's internal handler interface (see <c>KestrelHPack</c>).
/// </summary>
[AttributeUsage(AttributeTargets.Assembly, AllowMultiple = true)]
internal sealed class IgnoresAccessChecksToAttribute(string assemblyName) : Attribute
{
    /// <summary>The assembly whose non-public types may be used.</summary>
    public string AssemblyName { get; } = assemblyName;
}
