namespace System.Runtime.CompilerServices;

/// <summary>Lets records with init accessors compile for netstandard2.0, which lacks this marker type.</summary>
internal static class IsExternalInit
{
}
